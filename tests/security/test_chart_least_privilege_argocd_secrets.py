"""Berth's identity on its own cluster and the Secrets in Argo CD's namespace, where RBAC alone
cannot say it: its Role there would let it rewrite or delete every Secret (Argo CD's admin
credentials, its cluster Secrets); the chart's policies leave it its tenants' repository Secrets
only, which a tenant's plan still applies and deletes. Each test makes the request Berth would
make, as Berth, on a stand-in with the chart installed (tests/support/security_chart.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from provisioning.plan import ARGOCD, ClusterSpec, PlanInput, RepoCredential, TenantSpec, render
from tests.support.security_chart import (
    ARGOCD_NAMESPACE,
    BERTHS,
    REPOSITORY,
    Cluster,
    path_of_ref,
    refused,
)


def secret(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": ARGOCD_NAMESPACE, "labels": labels},
        "data": {"url": "aHR0cHM6Ly9naXQuZXhhbXBsZS5jb20vcGF5bWVudHMuZ2l0"},
    }


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
@pytest.mark.parametrize(
    "labels",
    [
        {"app.kubernetes.io/part-of": "argocd"},  # argocd-secret: its admin password, its keys
        {"argocd.argoproj.io/secret-type": "cluster"},  # a cluster Argo CD deploys to
        {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"},  # Berth's, but not a repository
    ],
    ids=["argo-cds-own", "a-cluster-secret", "berths-non-repository"],
)
def test_berth_cannot_change_or_delete_a_secret_in_argo_cds_namespace_that_is_not_its_own(
    cluster: Cluster, method: str, labels: dict[str, str]
) -> None:
    cluster.as_admin(secret("argocd-secret", labels))
    path = f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/argocd-secret"

    if method == "PATCH":
        answer = cluster.call(
            cluster.berth,
            "PATCH",
            path,
            {"data": {"admin.password": "eA=="}},
            content_type="application/merge-patch+json",
        )
    else:
        answer = cluster.call(cluster.berth, "DELETE", path)

    assert refused(
        answer,
        "only its own repository Secrets in Argo CD's namespace",
        "argocd-secret is not one of them",
    )
    kept = cluster.call(cluster.admin, "GET", path).json()
    assert kept["metadata"]["labels"] == labels and "admin.password" not in kept["data"]


def test_berth_changes_and_deletes_its_own_repository_secret(cluster: Cluster) -> None:
    cluster.as_admin(secret("berth-repo-payments", REPOSITORY))
    path = f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/berth-repo-payments"

    patched = cluster.apply(cluster.berth, secret("berth-repo-payments", REPOSITORY))
    deleted = cluster.call(cluster.berth, "DELETE", path)

    assert (patched.status_code, deleted.status_code) == (200, 200), (patched.text, deleted.text)
    assert cluster.call(cluster.admin, "GET", path).status_code == 404


@pytest.mark.parametrize(
    "labels",
    [
        {},
        BERTHS,  # Berth's, but not a repository Argo CD reads
        {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"},
        {"argocd.argoproj.io/secret-type": "repository"},  # a repository, but not Berth's
    ],
    ids=["unlabelled", "no-secret-type", "cluster-secret-type", "not-managed-by-berth"],
)
def test_berth_cannot_create_a_secret_in_argo_cds_namespace_but_a_repository_of_its_own(
    cluster: Cluster, labels: dict[str, str]
) -> None:
    answer = cluster.apply(cluster.berth, secret("berth-repo-payments", labels))

    assert refused(answer, "must be a tenant's repository Secret")
    assert (
        cluster.call(
            cluster.admin,
            "GET",
            f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/berth-repo-payments",
        ).status_code
        == 404
    )


def test_berth_cannot_turn_its_repository_secret_into_another_kind(cluster: Cluster) -> None:
    cluster.as_admin(secret("berth-repo-payments", REPOSITORY))

    answer = cluster.apply(
        cluster.berth,
        secret("berth-repo-payments", {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"}),
    )

    assert refused(answer, "must be a tenant's repository Secret")


def test_what_a_tenant_plan_puts_in_argo_cds_namespace_and_removes_passes(cluster: Cluster) -> None:
    """Berth's own provisioning under the policies: the tenant's repository Secret and
    namespace the plan applies, and the same ones its decommission deletes."""
    inputs = PlanInput(
        request_id=7,
        tenant=TenantSpec(
            slug="payments",
            name="Payments",
            groups={"owner": ("po",)},
            repo_url="https://git.example.com/payments.git",
            credential=RepoCredential(transport="https", username="bot", password="t0ken"),
        ),
        cluster=ClusterSpec(
            name="prod",
            argocd_namespace=ARGOCD_NAMESPACE,
            has_kargo=False,
            ingress_namespace="ingress",
        ),
        engine="argocd",
        tenant_engines=frozenset({ARGOCD}),
    )
    plan = render(inputs)
    wanted = [
        obj
        for obj in plan.apply
        if obj["kind"] == "Namespace"
        or (obj["kind"] == "Secret" and obj["metadata"]["namespace"] == ARGOCD_NAMESPACE)
    ]
    assert {obj["kind"] for obj in wanted} == {"Namespace", "Secret"}
    for obj in wanted:
        answer = cluster.apply(cluster.berth, obj)
        assert answer.status_code == 201, answer.text

    gone = render(
        replace(inputs, tenant_engines=frozenset(), remove_tenant_engines=frozenset({ARGOCD}))
    ).delete
    for ref in gone:
        if ref.kind in {"Namespace", "Secret"}:
            answer = cluster.call(cluster.berth, "DELETE", path_of_ref(ref))
            assert answer.status_code == 200, (ref, answer.text)
