"""Authentication: who a request is (token file, ServiceAccount tokens, impersonation,
anonymous), as kube-apiserver answers it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesandbox import KubeSandbox

from .conftest import raw
from .rbac_support import RBAC, admin, alice, alice_and_admin, bind, grant_alice, role


@pytest.fixture
def sandbox_options(tmp_path: Path) -> dict:
    return alice_and_admin(tmp_path)


def test_whoami_names_the_token_file_user_and_groups(sandbox: KubeSandbox) -> None:
    status, body = alice(
        sandbox,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert status == 201
    assert body["status"]["userInfo"] == {
        "username": "alice",
        "uid": "1001",
        "groups": ["devs", "qa", "system:authenticated"],
    }


def test_impersonation_needs_the_impersonate_verb(sandbox: KubeSandbox, team: str) -> None:
    status, body = alice(
        sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps", **{"Impersonate-User": "bob"}
    )
    assert status == 403
    assert body["message"] == (
        'users "bob" is forbidden: User "alice" cannot impersonate '
        'resource "users" in API group "" at the cluster scope'
    )
    grant_alice(
        sandbox,
        role(
            "impersonator",
            {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"]},
            cluster=True,
        ),
    )
    admin(
        sandbox,
        "POST",
        f"{RBAC}/namespaces/{team}/rolebindings",
        bind("bob-view", "view", kind="ClusterRole", user="bob"),
    )
    assert (
        alice(
            sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps", **{"Impersonate-User": "bob"}
        )[0]
        == 200
    )
    status, _ = alice(
        sandbox,
        "GET",
        f"/api/v1/namespaces/{team}/configmaps",
        **{"Impersonate-User": "bob", "Impersonate-Group": "admins"},
    )
    assert status == 403  # groups need impersonate on "groups" too


def test_service_account_tokens_come_from_the_token_request_api(
    sandbox: KubeSandbox, team: str
) -> None:
    admin(
        sandbox, "POST", f"/api/v1/namespaces/{team}/serviceaccounts", {"metadata": {"name": "ci"}}
    )
    status, body = admin(
        sandbox,
        "POST",
        f"/api/v1/namespaces/{team}/serviceaccounts/ci/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )
    assert (status, body["kind"]) == (201, "TokenRequest")
    token = {"Authorization": f"Bearer {body['status']['token']}"}
    _, review = raw(
        sandbox,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"kind": "SelfSubjectReview"},
        headers=token,
    )
    assert review["status"]["userInfo"]["username"] == "system:serviceaccount:team-a:ci"
    assert set(review["status"]["userInfo"]["groups"]) == {
        "system:serviceaccounts",
        "system:serviceaccounts:team-a",
        "system:authenticated",
    }
    status, _ = alice(sandbox, "POST", f"/api/v1/namespaces/{team}/serviceaccounts/ci/token", {})
    assert status == 403  # minting needs create on serviceaccounts/token
    admin(sandbox, "DELETE", f"/api/v1/namespaces/{team}/serviceaccounts/ci")
    assert raw(sandbox, "GET", "/api", headers=token)[0] == 401


def test_anonymous_requests_see_public_info_only(sandbox: KubeSandbox) -> None:
    assert raw(sandbox, "GET", "/version")[0] == 200
    assert raw(sandbox, "GET", "/healthz") == (200, "ok")
    status, body = raw(sandbox, "GET", "/api")
    assert status == 403
    assert body["message"] == 'forbidden: User "system:anonymous" cannot get path "/api"'
    assert alice(sandbox, "GET", "/apis")[0] == 200  # system:discovery, for the authenticated
