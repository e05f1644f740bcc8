"""Berth's identity on its own cluster touches only the namespaces it made, where RBAC alone
cannot say it (RBAC cannot select by label): it cannot delete a namespace it did not make nor
label one as its own, nor bind a role or write its repository credentials anywhere else
(kube-system included), and still does all of that in its own. Each test makes the request Berth
would make, as Berth, on a stand-in with the chart installed (tests/support/security_chart.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.authz import path_of
from tests.support.security_chart import (
    BERTHS,
    RELEASE_NAMESPACE,
    Cluster,
    gone,
    namespace,
    refused,
)


def test_berth_cannot_delete_a_namespace_it_did_not_make(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/team-legacy")

    assert refused(
        answer,
        "Berth deletes only the namespaces it made",
        "app.kubernetes.io/managed-by: berth",
        "team-legacy is not one of them",
    )
    assert (
        cluster.call(cluster.admin, "GET", "/api/v1/namespaces/team-legacy").json()["status"][
            "phase"
        ]
        == "Active"
    )


def test_berth_deletes_a_namespace_it_labelled_as_its_own(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-shop-dev", BERTHS))

    answer = cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/payments-shop-dev")

    assert answer.status_code == 200, answer.text
    assert answer.json()["status"]["phase"] == "Terminating"


def test_berth_cannot_label_a_namespace_as_its_own_to_delete_it(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.apply(cluster.berth, namespace("team-legacy", BERTHS))

    assert refused(answer, "may not label a namespace it did not make as its own")
    assert (
        cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/team-legacy").status_code == 403
    )


def test_berth_still_applies_its_own_namespace_which_it_does_not_own(cluster: Cluster) -> None:
    """ "Install guardrails" applies Berth's namespace labelled part-of, not managed-by."""
    answer = cluster.apply(
        cluster.berth, namespace(RELEASE_NAMESPACE, {"app.kubernetes.io/part-of": "berth"})
    )

    assert answer.status_code == 200, answer.text


def test_the_namespace_policy_is_berths_alone(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.call(cluster.admin, "DELETE", "/api/v1/namespaces/team-legacy")

    assert answer.status_code == 200, answer.text


def role_binding(namespace: str) -> dict[str, Any]:
    """What a stolen Berth token would do: bind a role Berth may bind to Berth itself."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "berth-owners", "namespace": namespace, "labels": BERTHS},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "berth-tenant-edit",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "berth", "namespace": RELEASE_NAMESPACE}],
    }


def repo_credentials(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": "berth-repo-credentials", "namespace": namespace, "labels": BERTHS},
        "data": {"password": "dDBrZW4="},
    }


@pytest.mark.parametrize("where", ["kube-system", "team-legacy"])
def test_berth_cannot_bind_a_role_outside_the_namespaces_it_made(
    cluster: Cluster, where: str
) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.apply(cluster.berth, role_binding(where))

    assert refused(
        answer,
        "Berth writes only in the namespaces it made",
        f"{where} is not one of them (rolebindings {where}/berth-owners)",
    )
    assert gone(cluster, role_binding(where))


def test_berth_cannot_write_its_repository_credentials_outside_its_namespaces(
    cluster: Cluster,
) -> None:
    answer = cluster.apply(cluster.berth, repo_credentials("kube-system"))

    assert refused(
        answer, "Berth writes only in the namespaces it made", "kube-system is not one of them"
    )
    assert gone(cluster, repo_credentials("kube-system"))


def test_berth_binds_roles_and_writes_credentials_in_a_namespace_it_made(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-gitops", BERTHS))

    applied = [
        cluster.apply(cluster.berth, role_binding("payments-gitops")),
        cluster.apply(cluster.berth, repo_credentials("payments-gitops")),
    ]
    # A RoleBinding whose role changed is deleted and made again (engine.apply_object).
    deleted = cluster.call(cluster.berth, "DELETE", path_of(role_binding("payments-gitops")))

    assert [answer.status_code for answer in applied] == [201, 201], [a.text for a in applied]
    assert deleted.status_code == 200, deleted.text
