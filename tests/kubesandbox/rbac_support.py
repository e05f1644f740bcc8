"""What the authentication and RBAC tests share: a sandbox with an admin token and a
token-file user, alice (in groups devs and qa), calls as each, and Role/binding builders."""

from __future__ import annotations

from pathlib import Path

from kubesandbox import KubeSandbox

from .conftest import raw

RBAC = "/apis/rbac.authorization.k8s.io/v1"
ALICE = {"Authorization": "Bearer alice-token"}


def alice_and_admin(tmp_path: Path) -> dict:
    """Sandbox options: the admin's token, and alice in a token file."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('alice-token,alice,1001,"devs,qa"\n')
    return {"token": "admin-token", "token_file": tokens}


def admin(sandbox: KubeSandbox, method: str, path: str, body: object = None) -> tuple:
    return raw(sandbox, method, path, body, headers={"Authorization": "Bearer admin-token"})


def alice(
    sandbox: KubeSandbox, method: str, path: str, body: object = None, **headers: str
) -> tuple:
    return raw(sandbox, method, path, body, headers={**ALICE, **headers})


def role(name: str, *rules: dict, cluster: bool = False) -> dict:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole" if cluster else "Role",
        "metadata": {"name": name},
        "rules": list(rules),
    }


def bind(
    name: str, role_name: str, *, kind: str = "Role", user: str = "alice", cluster: bool = False
) -> dict:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding" if cluster else "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role_name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }


def grant_alice(sandbox: KubeSandbox, granted: dict, namespace: str | None = None) -> None:
    """As the admin: the Role `granted` in `namespace` and a RoleBinding of alice to it, or
    the ClusterRole and a ClusterRoleBinding; the binding is alice-<the role's name>."""
    name = granted["metadata"]["name"]
    cluster = granted["kind"] == "ClusterRole"
    where = RBAC if cluster else f"{RBAC}/namespaces/{namespace}"
    plural = "clusterroles" if cluster else "roles"
    assert admin(sandbox, "POST", f"{where}/{plural}", granted)[0] == 201
    binding = bind(f"alice-{name}", name, kind=granted["kind"], cluster=cluster)
    assert admin(sandbox, "POST", f"{where}/{plural[:-1]}bindings", binding)[0] == 201


def create_namespace(sandbox: KubeSandbox, name: str = "team-a") -> str:
    """Create a namespace as the admin."""
    assert admin(sandbox, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})[0] == 201
    return name
