"""Berth's identity on its own cluster and the GitOps engines' objects, where RBAC alone cannot
say it: it cannot delete or adopt Argo CD's `default` AppProject, put an Application in Argo
CD's namespace, or delete anyone's Kustomization or Kargo Project, and still writes and deletes
its tenants' own. Each test makes the request Berth would make, as Berth, on a stand-in with the
chart installed (tests/support/security_chart.py)."""

from __future__ import annotations

from typing import Any

import pytest

from provisioning.plan import GITOPS_SOURCES_CONFIG
from tests.support.authz import path_of
from tests.support.security_chart import (
    ARGOCD_NAMESPACE,
    BERTHS,
    FLUX_NAMESPACE,
    Cluster,
    gone,
    kargo_project,
    namespace,
    refused,
)


def appproject(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": name, "namespace": ARGOCD_NAMESPACE, "labels": labels},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]},
    }


def kustomization(namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "root", "namespace": namespace, "labels": labels},
        "spec": {
            "interval": "10m0s",
            "path": "./",
            "prune": True,
            "serviceAccountName": "berth-reconciler",
            "sourceRef": {"kind": "GitRepository", "name": "payments"},
        },
    }


@pytest.mark.parametrize("method", ["DELETE", "PATCH"])
def test_berth_cannot_delete_or_adopt_argo_cds_default_appproject(
    cluster: Cluster, method: str
) -> None:
    cluster.as_admin(appproject("default", {}))
    project = appproject("default", BERTHS)

    if method == "DELETE":
        answer = cluster.call(cluster.berth, "DELETE", path_of(project))
    else:  # labelling it as Berth's would make it deletable
        answer = cluster.apply(cluster.berth, project)

    assert refused(
        answer,
        "In Argo CD's namespace Berth writes only its tenants' AppProjects",
        f"appprojects {ARGOCD_NAMESPACE}/default is not one of them",
    )
    kept = cluster.call(cluster.admin, "GET", path_of(project)).json()
    assert kept["metadata"].get("labels", {}) == {}


def test_berth_cannot_put_an_application_in_argo_cds_namespace(cluster: Cluster) -> None:
    """Its roots live in <tenant>-apps; one in Argo CD's namespace could use any AppProject."""
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "root", "namespace": ARGOCD_NAMESPACE, "labels": BERTHS},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://git.example.com/x.git", "path": "."},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "kube-system"},
        },
    }

    answer = cluster.apply(cluster.berth, application)

    assert refused(answer, "applications argocd/root is not one of them")


def test_berth_writes_and_deletes_its_tenants_appproject(cluster: Cluster) -> None:
    made = cluster.apply(cluster.berth, appproject("payments", BERTHS))
    deleted = cluster.call(cluster.berth, "DELETE", path_of(appproject("payments", BERTHS)))

    assert (made.status_code, deleted.status_code) == (201, 200), (made.text, deleted.text)


def test_berth_cannot_delete_a_kustomization_it_did_not_make(cluster: Cluster) -> None:
    theirs = kustomization(FLUX_NAMESPACE, {"kustomize.toolkit.fluxcd.io/name": "flux-system"})
    cluster.as_admin(theirs)

    answer = cluster.call(cluster.berth, "DELETE", path_of(theirs))

    assert refused(
        answer,
        "Berth writes only in the namespaces it made",
        f"{FLUX_NAMESPACE} is not one of them (kustomizations {FLUX_NAMESPACE}/root)",
    )
    assert not gone(cluster, theirs)


def test_berth_deletes_the_kustomization_in_its_tenants_gitops_namespace(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-gitops", BERTHS))
    # The Flux tenancy policy's parameter, as the plan puts it there.
    cluster.as_admin(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": GITOPS_SOURCES_CONFIG,
                "namespace": "payments-gitops",
                "labels": BERTHS,
            },
            "data": {},
        }
    )
    cluster.as_admin(kustomization("payments-gitops", BERTHS))

    answer = cluster.call(
        cluster.berth, "DELETE", path_of(kustomization("payments-gitops", BERTHS))
    )

    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("method", ["DELETE", "PATCH"])
def test_berth_cannot_delete_or_adopt_a_kargo_project_it_did_not_make(
    cluster: Cluster, method: str
) -> None:
    cluster.as_admin(kargo_project("platform", {"team": "platform"}))

    if method == "DELETE":
        answer = cluster.call(cluster.berth, "DELETE", path_of(kargo_project("platform", {})))
    else:
        answer = cluster.apply(cluster.berth, kargo_project("platform", BERTHS))

    assert refused(
        answer,
        "Berth writes only the Kargo Projects it made",
        "projects platform is not one of them",
    )
    assert not gone(cluster, kargo_project("platform", {}))


def test_berth_makes_and_deletes_its_own_kargo_project(cluster: Cluster) -> None:
    made = cluster.apply(cluster.berth, kargo_project("payments-shop-kargo", BERTHS))
    deleted = cluster.call(
        cluster.berth, "DELETE", path_of(kargo_project("payments-shop-kargo", BERTHS))
    )

    assert (made.status_code, deleted.status_code) == (201, 200), (made.text, deleted.text)
