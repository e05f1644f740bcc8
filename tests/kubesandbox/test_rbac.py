"""RBAC: what the stored roles and bindings let a user do, worded like kube-apiserver
(refusals, narrowing by name and subresource, aggregation, escalation and bind checks,
access reviews)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesandbox import KubeSandbox

from .conftest import raw
from .rbac_support import RBAC, admin, alice, alice_and_admin, bind, grant_alice, role


@pytest.fixture
def sandbox_options(tmp_path: Path) -> dict:
    return alice_and_admin(tmp_path)


def test_an_unbound_user_is_refused_in_the_apiservers_words(
    sandbox: KubeSandbox, team: str
) -> None:
    status, body = alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'configmaps is forbidden: User "alice" cannot list resource '
        '"configmaps" in API group "" in the namespace "team-a"'
    )
    assert body["details"] == {"kind": "configmaps"}
    status, body = alice(sandbox, "GET", "/apis/apps/v1/deployments")
    assert body["message"] == (
        'deployments.apps is forbidden: User "alice" cannot list resource '
        '"deployments" in API group "apps" at the cluster scope'
    )
    assert (
        raw(sandbox, "GET", "/api/v1/namespaces", headers={"Authorization": "Bearer nobody"})[0]
        == 401
    )


def test_the_view_role_reads_but_does_not_write_or_read_secrets(
    sandbox: KubeSandbox, team: str
) -> None:
    admin(
        sandbox,
        "POST",
        f"{RBAC}/namespaces/{team}/rolebindings",
        bind("alice-view", "view", kind="ClusterRole"),
    )
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")[0] == 200
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/secrets")[0] == 403
    assert (
        alice(
            sandbox, "POST", f"/api/v1/namespaces/{team}/configmaps", {"metadata": {"name": "x"}}
        )[0]
        == 403
    )
    assert alice(sandbox, "GET", "/api/v1/namespaces/default/configmaps")[0] == 403


def test_access_ends_with_the_binding_or_its_role_and_stays_in_its_namespace(
    sandbox: KubeSandbox, team: str
) -> None:
    read = role("read", {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]})
    assert admin(sandbox, "POST", "/api/v1/namespaces", {"metadata": {"name": "team-b"}})[0] == 201
    admin(sandbox, "POST", f"{RBAC}/namespaces/team-b/roles", read)
    grant_alice(sandbox, read, team)
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")[0] == 200
    assert alice(sandbox, "GET", "/api/v1/namespaces/team-b/configmaps")[0] == 403

    admin(sandbox, "DELETE", f"{RBAC}/namespaces/{team}/roles/read")
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")[0] == 403
    admin(sandbox, "POST", f"{RBAC}/namespaces/{team}/roles", read)
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")[0] == 200
    admin(sandbox, "DELETE", f"{RBAC}/namespaces/{team}/rolebindings/alice-read")
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")[0] == 403


def test_resource_names_and_subresources_narrow_a_rule(sandbox: KubeSandbox, team: str) -> None:
    for name in ("a", "b"):
        admin(
            sandbox, "POST", f"/api/v1/namespaces/{team}/configmaps", {"metadata": {"name": name}}
        )
    grant_alice(
        sandbox,
        role(
            "read-a",
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "verbs": ["get"],
                "resourceNames": ["a"],
            },
            {"apiGroups": ["apps"], "resources": ["deployments/status"], "verbs": ["get"]},
        ),
        team,
    )
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps/a")[0] == 200
    status, body = alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps/b")
    assert status == 403 and body["message"].startswith('configmaps "b" is forbidden')
    assert alice(sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps")[0] == 403
    status, body = alice(sandbox, "GET", f"/apis/apps/v1/namespaces/{team}/deployments/x")
    assert status == 403
    status, body = alice(sandbox, "GET", f"/apis/apps/v1/namespaces/{team}/deployments/x/status")
    assert status == 404  # allowed, and there is no such Deployment


def test_cluster_roles_aggregate_by_label(sandbox: KubeSandbox) -> None:
    widgets = role(
        "widgets-view",
        {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]},
        cluster=True,
    )
    widgets["metadata"]["labels"] = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    admin(sandbox, "POST", f"{RBAC}/clusterroles", widgets)
    for name in ("view", "edit", "admin"):
        rules = admin(sandbox, "GET", f"{RBAC}/clusterroles/{name}")[1]["rules"]
        assert {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]} in (
            rules
        ), name
    admin(sandbox, "DELETE", f"{RBAC}/clusterroles/widgets-view")
    rules = admin(sandbox, "GET", f"{RBAC}/clusterroles/view")[1]["rules"]
    assert all(r.get("apiGroups") != ["example.com"] for r in rules)


def test_granting_what_you_do_not_hold_needs_escalate(sandbox: KubeSandbox, team: str) -> None:
    grant_alice(
        sandbox,
        role(
            "role-writer",
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["roles"],
                "verbs": ["create"],
            },
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
        ),
        team,
    )
    path = f"{RBAC}/namespaces/{team}/roles"
    held = role("cm-reader", {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]})
    assert alice(sandbox, "POST", path, held)[0] == 201
    more = role("secret-reader", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    status, body = alice(sandbox, "POST", path, more)
    assert status == 403
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "alice" '
        '(groups=["devs" "qa" "system:authenticated"]) is attempting to grant RBAC permissions '
        'not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )
    grant_alice(
        sandbox,
        role(
            "escalator",
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["roles"],
                "verbs": ["escalate"],
            },
        ),
        team,
    )
    assert alice(sandbox, "POST", path, more)[0] == 201


def test_binding_a_role_you_do_not_hold_needs_bind(sandbox: KubeSandbox, team: str) -> None:
    grant_alice(
        sandbox,
        role(
            "binder",
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["rolebindings"],
                "verbs": ["create"],
            },
        ),
        team,
    )
    path = f"{RBAC}/namespaces/{team}/rolebindings"
    status, body = alice(
        sandbox, "POST", path, bind("bob-admin", "admin", kind="ClusterRole", user="bob")
    )
    assert status == 403
    assert "is attempting to grant RBAC permissions not currently held" in body["message"]
    grant_alice(
        sandbox,
        role(
            "bind-admin",
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["clusterroles"],
                "verbs": ["bind"],
                "resourceNames": ["admin"],
            },
            cluster=True,
        ),
    )
    assert (
        alice(sandbox, "POST", path, bind("bob-admin", "admin", kind="ClusterRole", user="bob"))[0]
        == 201
    )


def test_access_reviews_answer_for_self_and_others(sandbox: KubeSandbox, team: str) -> None:
    admin(
        sandbox,
        "POST",
        f"{RBAC}/namespaces/{team}/rolebindings",
        bind("alice-edit", "edit", kind="ClusterRole"),
    )
    authz = "/apis/authorization.k8s.io/v1"
    question = {
        "resourceAttributes": {
            "namespace": team,
            "verb": "create",
            "resource": "deployments",
            "group": "apps",
        }
    }
    status, body = alice(sandbox, "POST", f"{authz}/selfsubjectaccessreviews", {"spec": question})
    assert (status, body["status"]["allowed"]) == (201, True)
    assert body["status"]["reason"] == (
        'RBAC: allowed by RoleBinding "team-a/alice-edit" of ClusterRole "edit" to User "alice"'
    )
    _, body = admin(
        sandbox, "POST", f"{authz}/subjectaccessreviews", {"spec": {**question, "user": "carol"}}
    )
    assert body["status"]["allowed"] is False
    _, body = alice(
        sandbox, "POST", f"{authz}/selfsubjectrulesreviews", {"spec": {"namespace": team}}
    )
    assert any(
        "deployments" in r.get("resources", []) and "create" in r["verbs"]
        for r in body["status"]["resourceRules"]
    )
    assert body["status"]["incomplete"] is False
