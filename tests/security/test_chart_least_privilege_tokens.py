"""Berth asks for deploy tokens (TokenRequest, `create serviceaccounts/token`) and RBAC
cannot say where: the chart's own-objects policy fences it to the namespaces Berth made, so
it cannot mint a token of a ServiceAccount elsewhere (kube-system's, Argo CD's) and act as
that. Installed from the chart into the Kubernetes API stand-in, asked with Berth's token."""

from __future__ import annotations

import pytest

from tests.support.security_chart import BERTHS, Cluster, namespace, refused

TOKEN_REQUEST = {
    "apiVersion": "authentication.k8s.io/v1",
    "kind": "TokenRequest",
    "spec": {"expirationSeconds": 600},
}


def service_account(name: str, where: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": where},
    }


@pytest.mark.parametrize("where", ["kube-system", "team-legacy"])
def test_berth_cannot_mint_a_token_outside_the_namespaces_it_made(cluster: Cluster, where) -> None:
    if where != "kube-system":
        cluster.as_admin(namespace(where, {"team": "legacy"}))
    cluster.as_admin(service_account("powerful", where))

    answer = cluster.call(
        cluster.berth,
        "POST",
        f"/api/v1/namespaces/{where}/serviceaccounts/powerful/token",
        TOKEN_REQUEST,
    )

    assert refused(answer, "Berth writes only in the namespaces it made", f"{where} is not one")
    assert "token" not in answer.json().get("status", {})


def test_berth_mints_a_token_in_a_namespace_it_made(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-shop-dev", BERTHS))
    cluster.as_admin(service_account("berth-deploy-0123456789", "payments-shop-dev"))

    answer = cluster.call(
        cluster.berth,
        "POST",
        "/api/v1/namespaces/payments-shop-dev/serviceaccounts/berth-deploy-0123456789/token",
        TOKEN_REQUEST,
    )

    assert answer.status_code == 201, answer.text
    assert answer.json()["status"]["token"]
