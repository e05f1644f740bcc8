"""Builders the ValidatingAdmissionPolicy tests share: bindings, ClusterRoleBindings, the
headers that impersonate a user, and the calls that put a policy in force."""

from __future__ import annotations

from kubesandbox import KubeSandbox

from .conftest import raw

ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def as_user(user: str, *groups: str) -> dict[str, str]:
    """Impersonation headers (the sandbox's anonymous user is the admin here)."""
    headers = {"Impersonate-User": user}
    if groups:
        headers["Impersonate-Group"] = ", ".join(groups)
    return headers


def cluster_role_binding(name: str, role: str, kind: str, subject: str) -> dict:
    subject_entry = {"kind": kind, "name": subject}
    if kind == "ServiceAccount":
        subject_entry["name"], subject_entry["namespace"] = (
            subject.split(":")[-1],
            (subject.split(":")[-2]),
        )
    else:
        subject_entry["apiGroup"] = "rbac.authorization.k8s.io"
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [subject_entry],
    }


def binding(policy: str, actions: list[str], **spec: object) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{policy}-binding"},
        "spec": {"policyName": policy, "validationActions": actions, **spec},
    }


def bind(sandbox: KubeSandbox, policy: str, actions: list[str], **spec: object) -> None:
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding(policy, actions, **spec),
    )


def enforce(sandbox: KubeSandbox, policy: dict, actions: list[str], **spec: object) -> None:
    """Creates the policy and binds it with these validation actions."""
    raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
    bind(sandbox, policy["metadata"]["name"], actions, **spec)
