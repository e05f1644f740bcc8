"""An access grant's one object: a RoleBinding in its namespace of the ClusterRole its role
names, to the person alone (a `User` subject: the name the cluster gives their ID token),
labelled as Berth's for the tenant and with its grant, its end in an annotation. Part of
the namespace's desired state while the grant lasts; once it is over, the reconcile of the
namespace removes it like any binding Berth no longer plans. Pure."""

from __future__ import annotations

from typing import Any

from provisioning.plan.model import (
    ANNOTATION_ACCESS_EXPIRES,
    LABEL_ACCESS_GRANT,
    LABEL_REQUEST,
    LABEL_TENANT,
    MANAGED_BY,
    GrantSpec,
    metadata_of,
)

ANNOTATION_ACCESS_ROLE = "berth.dev/access-role"
ANNOTATION_ACCESS_MINUTES = "berth.dev/access-minutes"


def grant_binding_name(grant_id: int) -> str:
    return f"berth-access-{grant_id}"


def grant_binding(grant: GrantSpec, tenant: str) -> dict[str, Any]:
    labels = {
        MANAGED_BY: "berth",
        LABEL_TENANT: tenant,
        LABEL_REQUEST: str(grant.request_id),
        LABEL_ACCESS_GRANT: str(grant.id),
    }
    metadata = metadata_of(grant_binding_name(grant.id), labels, grant.namespace)
    metadata["annotations"] = {
        ANNOTATION_ACCESS_ROLE: grant.role,
        ANNOTATION_ACCESS_MINUTES: str(grant.minutes),
        **({ANNOTATION_ACCESS_EXPIRES: grant.expires_at} if grant.expires_at else {}),
    }
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata,
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": grant.cluster_role,
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": grant.subject}
        ],
    }


def grant_objects(grants: tuple[GrantSpec, ...], tenant: str) -> list[dict[str, Any]]:
    return [grant_binding(grant, tenant) for grant in grants]
