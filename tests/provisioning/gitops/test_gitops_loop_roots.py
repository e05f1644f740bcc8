"""The GitOps loop, end to end: what Berth applies on a cluster reads what it writes in the
tenant's repository, as the tenant. The roots and their credentials, shown redacted in the
plan before approval; each cluster with roots and an index of its own.

Against the Kubernetes API stand-in (Berth as its ServiceAccount with the chart's RBAC, the
upstream Argo CD, Kargo and Flux CRDs) and a git server over HTTP wanting the tenant's token.
An Argo CD project, an Argo CD + Kargo project and a Flux project are provisioned; then each
root is followed to the directory it names in a clone of the repository, and
`kubectl kustomize` builds what the engine would apply.
"""

from __future__ import annotations

import base64

import pytest
import yaml

from provisioning.schema import validate_objects
from provisioning.tasks import install_guardrails
from tenants import services
from tenants.choices import RequestState
from tenants.models import Cluster
from tenants.selectors import review
from tests.support.cluster import sign_in_as_berth, stand_in
from tests.support.gitops_loop import TOKEN, project, provision_three_projects, work
from tests.support.gitops_roots import (
    ARGO,
    FLUX_KUSTOMIZE,
    FLUX_SOURCE,
    RBAC,
    clone,
    kustomize,
    live,
    secret_values,
)
from tests.support.gitserver import files_on

# Every test runs against the stand-in with the upstream CRDs, and checks what the roots
# read against them.
pytestmark = pytest.mark.crds


@pytest.mark.processes  # kubectl
def test_the_roots_on_the_cluster_read_the_files_in_the_repository(gitops_world, sandbox, tmp_path):
    provision_three_projects(gitops_world)
    repo_url = gitops_world["tenant"].gitops_repo_url

    # --- in the cluster: the roots, bound to the tenant's guardrails, and the credentials
    appproject = live(sandbox, "AppProject", "payments", "argocd", api=ARGO)
    assert appproject["spec"]["sourceRepos"] == [repo_url]
    assert appproject["spec"]["sourceNamespaces"] == ["payments-apps"]
    argo_root = live(sandbox, "Application", "berth-root", "payments-apps", api=ARGO)
    assert argo_root["spec"]["project"] == "payments"  # the tenant's fences, not default
    assert argo_root["spec"]["source"] == {
        "repoURL": repo_url,
        "targetRevision": "main",
        "path": "clusters/sandbox/argocd",
    }
    repository = live(sandbox, "Secret", "berth-repo-payments", "argocd")
    assert repository["metadata"]["labels"]["argocd.argoproj.io/secret-type"] == "repository"
    assert secret_values(repository) == {
        "type": "git",
        "url": repo_url,
        "project": "payments",
        "username": "payments-bot",
        "password": TOKEN,
    }

    source = live(sandbox, "GitRepository", "payments", "payments-gitops", api=FLUX_SOURCE)
    assert source["spec"]["url"] == repo_url
    assert source["spec"]["secretRef"] == {"name": "berth-repo-credentials"}
    assert secret_values(live(sandbox, "Secret", "berth-repo-credentials", "payments-gitops")) == {
        "username": "payments-bot",
        "password": TOKEN,
    }
    flux_root = live(sandbox, "Kustomization", "berth-root", "payments-gitops", api=FLUX_KUSTOMIZE)
    assert flux_root["spec"]["serviceAccountName"] == "berth-reconciler"
    assert flux_root["spec"]["targetNamespace"] == "payments-gitops"
    reconciler = live(sandbox, "RoleBinding", "berth-reconciler", "payments-gitops", api=RBAC)
    assert reconciler["roleRef"]["name"] == "berth-flux-reconciler"
    in_feed = live(sandbox, "RoleBinding", "berth-reconciler", "payments-feed-dev", api=RBAC)
    assert in_feed["roleRef"]["name"] == "berth-tenant-edit"
    assert in_feed["subjects"] == [
        {"kind": "ServiceAccount", "name": "berth-reconciler", "namespace": "payments-gitops"}
    ]

    kargo_credential = live(sandbox, "Secret", "berth-repo-credentials", "payments-cart-kargo")
    assert kargo_credential["metadata"]["labels"]["kargo.akuity.io/cred-type"] == "git"
    assert secret_values(kargo_credential)["repoURL"] == repo_url
    members = live(sandbox, "Role", "berth-members-promote", "payments-cart-kargo", api=RBAC)
    assert members["rules"][0]["resourceNames"] == ["dev", "staging"]
    # (Berth wrote a Role granting `promote`: the stand-in's RBAC let it because the chart
    # gives Berth what such Roles grant, as a real API server requires.)

    # --- in git: every root's directory exists on its revision and builds
    checkout = clone(gitops_world, tmp_path)
    # Each root is handed its own engine's objects only: Argo CD would refuse the Flux
    # Kustomization (its namespace is outside the AppProject) and Flux the Applications.
    expected = {
        "clusters/sandbox/argocd": {
            ("Application", "payments-shop-dev"),
            ("Application", "payments-cart-dev"),
            ("Application", "payments-cart-staging"),
            ("Warehouse", "cart"),
            ("Stage", "dev"),
            ("Stage", "staging"),
        },
        "clusters/sandbox/flux": {("Kustomization", "payments-feed-dev")},
    }
    built = []
    for root in (argo_root, flux_root):
        path = (
            (root["spec"].get("source") or {}).get("path") or root["spec"]["path"]
        ).removeprefix("./")
        directory = checkout / path
        assert (directory / "kustomization.yaml").is_file(), path
        objects = kustomize(directory)
        assert validate_objects(objects) == {}
        assert {(obj["kind"], obj["metadata"]["name"]) for obj in objects} == expected[path]
        built += objects
    # What each child reads exists too, and builds: the environments' overlays.
    for obj in built:
        if obj["kind"] == "Application":
            assert obj["spec"]["project"] == "payments"
            assert obj["spec"]["source"]["repoURL"] == repo_url
            kustomize(checkout / obj["spec"]["source"]["path"])
        if obj["kind"] == "Kustomization":
            assert obj["metadata"]["namespace"] == "payments-gitops"
            assert obj["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "payments"}
            assert obj["spec"]["serviceAccountName"] == "berth-reconciler"
            kustomize(checkout / obj["spec"]["path"].removeprefix("./"))


def test_the_plan_shows_roots_and_credentials_redacted_before_approval(gitops_world):
    prod = project(gitops_world, "shop", "argocd", "prod", approve=False)
    assert prod.state == RequestState.SUBMITTED  # prod: a platform admin approves
    seen = review(prod)
    shown = seen.plan.to_yaml()
    assert "berth-root" in shown and "berth-repo-payments" in shown
    assert TOKEN not in shown
    assert base64.b64encode(TOKEN.encode()).decode() not in shown
    assert "<redacted> sha256:" in shown
    assert "+- ../../../apps/shop/prod\n" in seen.gitops_diff  # the index gains the environment


@pytest.mark.processes  # kubectl
def test_each_of_two_clusters_gets_its_own_roots_and_index(gitops_world, sandbox, tmp_path):
    with stand_in(termination_seconds=0.05) as other:
        eu = Cluster.objects.create(name="eu", api_url=other.url, has_kargo=True, is_sandbox=True)
        sign_in_as_berth(other, eu)
        # A new cluster gets Berth's guardrails before any tenant namespace, by the worker's
        # job a platform admin queues.
        assert "applied" in install_guardrails(eu.pk)
        gitops_world["tenant"].allowed_clusters.add(eu)
        services.request_tenant_sync(
            tenant=gitops_world["tenant"], actor=gitops_world["admin"], reason="eu opened"
        )
        project(gitops_world, "shop", "argocd", "dev")
        project(gitops_world, "web", "flux", "dev", cluster="eu")
        for done in work():
            assert done.state == RequestState.READY, (done.kind, done.status_message)

        here = live(sandbox, "Application", "berth-root", "payments-apps", api=ARGO)
        there = live(other, "Application", "berth-root", "payments-apps", api=ARGO)
        assert here["spec"]["source"]["path"] == "clusters/sandbox/argocd"
        assert there["spec"]["source"]["path"] == "clusters/eu/argocd"
        assert (
            live(other, "Kustomization", "berth-root", "payments-gitops", api=FLUX_KUSTOMIZE)[
                "spec"
            ]["path"]
            == "./clusters/eu/flux"
        )
        assert live(sandbox, "Namespace", "payments-web-dev") is None
        assert live(other, "Namespace", "payments-shop-dev") is None
        files = files_on(gitops_world["bare"])
        assert yaml.safe_load(files["clusters/sandbox/argocd/kustomization.yaml"])["resources"] == [
            "../../../apps/shop/dev"
        ]
        assert yaml.safe_load(files["clusters/eu/flux/kustomization.yaml"])["resources"] == [
            "../../../apps/web/dev"
        ]
        assert (
            yaml.safe_load(files["clusters/eu/argocd/kustomization.yaml"])["resources"] == []
        )  # the tenant's Argo CD root there reads an empty index
        checkout = clone(gitops_world, tmp_path)
        assert {o["metadata"]["name"] for o in kustomize(checkout / "clusters/eu/flux")} == {
            "payments-web-dev"
        }
