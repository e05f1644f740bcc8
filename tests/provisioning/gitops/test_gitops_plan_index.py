"""The pure GitOps rendering of the cluster's index, what the tenant's roots apply: one
per engine, listing each application's environments on that cluster (and Kargo), keeping the
others' entries, left alone once the team took it over, and built by `kubectl kustomize` into
every environment's definitions."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from provisioning import gitops_plan
from tests.support.gitops_rendering import ENGINES, inputs
from tests.support.gitops_roots import kustomize


def listed(content: str) -> list[str]:
    assert gitops_plan.is_managed(content)
    return yaml.safe_load(content.split("\n", 1)[1])["resources"]


def test_a_new_tenant_on_a_cluster_gets_an_empty_index_for_its_roots():
    spec = inputs(path="teams/payments")
    assert gitops_plan.index_path(spec) == (
        "teams/payments/clusters/sandbox/argocd/kustomization.yaml"
    )
    # One index per engine: each root is handed its own engine's objects only.
    assert gitops_plan.index_path(spec, "flux") == (
        "teams/payments/clusters/sandbox/flux/kustomization.yaml"
    )
    content, note = gitops_plan.render_index(None, spec)
    assert listed(content) == [] and not note


def test_the_index_lists_the_applications_environments_and_kargo_and_keeps_the_others():
    spec = inputs()
    entries = gitops_plan.index_entries(spec)
    assert entries == [
        "../../../apps/shop/dev",
        "../../../apps/shop/kargo",
        "../../../apps/shop/prod",
        "../../../apps/shop/staging",
    ]
    cart, _ = gitops_plan.render_index(None, spec, ["../../../apps/cart/dev"], app="cart")
    both, _ = gitops_plan.render_index(cart, spec, entries, app="shop")
    assert listed(both) == ["../../../apps/cart/dev", *entries]
    # An application that leaves the cluster leaves the index; the others stay.
    gone, _ = gitops_plan.render_index(both, spec, [], app="shop")
    assert listed(gone) == ["../../../apps/cart/dev"]
    # Writing what is there already changes nothing, not even the header's request.
    again, _ = gitops_plan.render_index(gone, replace(spec, request_id=99), [], app="shop")
    assert again == gone


def test_environments_on_another_cluster_stay_out_of_this_clusters_index():
    spec = inputs(tiers=("dev", "prod"))
    elsewhere = replace(spec.namespaces[1], cluster="prod-eu")
    spec = replace(spec, namespaces=(spec.namespaces[0], elsewhere))
    assert gitops_plan.index_entries(spec) == ["../../../apps/shop/dev", "../../../apps/shop/kargo"]


def test_an_index_the_team_took_over_is_left_alone_with_a_note():
    spec = inputs()
    theirs = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    content, note = gitops_plan.render_index(theirs, spec, ["../../../apps/shop/dev"], app="shop")
    assert content == theirs
    assert "not Berth's any more" in note


@pytest.mark.processes
def test_kubectl_kustomize_builds_the_index_into_every_environments_definitions(tmp_path):
    for engine in ENGINES:
        spec = inputs(engine, ("review", "dev", "staging", "prod"))
        files = gitops_plan.render_files(spec)
        index, _ = gitops_plan.render_index(None, spec, gitops_plan.index_entries(spec), app="shop")
        files[gitops_plan.index_path(spec)] = index
        root = tmp_path / engine
        for path, content in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(content)
        index_dir = (root / gitops_plan.index_path(spec)).parent
        built_objects = sorted(
            (doc["kind"], doc["metadata"]["name"]) for doc in kustomize(index_dir)
        )
        rendered = sorted(
            (obj["kind"], obj["metadata"]["name"]) for obj in gitops_plan.cluster_objects(files)
        )
        assert built_objects == rendered, engine
