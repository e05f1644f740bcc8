"""Builders the ValidatingAdmissionPolicy tests share: bindings, ClusterRoleBindings and
the headers that impersonate a user."""

from __future__ import annotations

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
