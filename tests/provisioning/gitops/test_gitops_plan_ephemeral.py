"""The pure GitOps rendering of ephemeral environments (review apps): files of their own
per environment, valid against the upstream CRDs, and removing one touches only its files."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from provisioning import gitops_plan
from provisioning.plan import NamespaceSpec, PlanInput
from provisioning.schema import validate_objects
from tenants.naming import fit
from tests.support.gitops_rendering import ENGINES, TIERS, inputs, scope


def with_review_apps(engine: str, *slugs: str, namespace: str = "") -> PlanInput:
    spec = inputs(engine, ("dev", "prod"))
    reviews = tuple(
        NamespaceSpec(
            namespace or fit(f"payments-shop-{slug}"),
            TIERS["review"],
            500,
            1024,
            0,
            "shop",
            environment=slug,
        )
        for slug in slugs
    )
    return replace(spec, namespaces=spec.namespaces + reviews)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_ephemeral_environment_has_files_of_its_own(engine):
    files = gitops_plan.render_files(
        with_review_apps(engine, "review-1", "review-2", namespace="payments-review-apps")
    )
    assert "apps/shop/overlays/review/review-1/kustomization.yaml" in files
    overlay = yaml.safe_load(
        files["apps/shop/overlays/review/review-2/kustomization.yaml"].split("\n", 2)[2]
    )
    assert overlay == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": "payments-review-apps",
        "resources": ["../../../base"],
    }
    names = {(obj["kind"], obj["metadata"]["name"]) for obj in gitops_plan.cluster_objects(files)}
    if engine == "flux":
        assert ("Kustomization", "payments-shop-review-1") in names
        assert ("Kustomization", "payments-shop-review-2") in names  # same namespace, no clash
    else:
        assert ("Application", "payments-shop-review-1") in names
        assert ("Application", "payments-shop-review-2") in names
    if engine == "argocd_kargo":
        assert ("Stage", "review-review-1") in names
        stages = {
            obj["metadata"]["name"]: obj
            for obj in gitops_plan.cluster_objects(files)
            if obj["kind"] == "Stage"
        }
        # Review apps take Freight from the Warehouse and feed nothing: prod follows dev.
        assert stages["review-review-1"]["spec"]["requestedFreight"][0]["sources"] == {
            "direct": True
        }
        assert stages["prod"]["spec"]["requestedFreight"][0]["sources"] == {"stages": ["dev"]}


@pytest.mark.crds
@pytest.mark.parametrize("engine", ENGINES)
def test_ephemeral_environments_validate_against_the_upstream_crds(engine):
    files = gitops_plan.render_files(with_review_apps(engine, "review-1", "x" * 60))
    assert validate_objects(gitops_plan.cluster_objects(files)) == {}


def test_removing_one_ephemeral_environment_touches_only_its_files():
    before = gitops_plan.render_files(with_review_apps("argocd", "review-1", "review-2"))
    after = gitops_plan.render_files(with_review_apps("argocd", "review-2"))
    spec = with_review_apps("argocd", "review-2")
    changed = gitops_plan.changes(before, gitops_plan.converge(before, after, scope(spec)).files)
    assert changed == {
        "apps/shop/overlays/review/review-1/kustomization.yaml": "deleted",
        "apps/shop/review/review-1/application.yaml": "deleted",
        "apps/shop/review/review-1/kustomization.yaml": "deleted",
    }
