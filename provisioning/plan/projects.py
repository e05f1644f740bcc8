"""A project's fences: the tenant's Argo CD AppProject and the Kargo Project with its
ProjectConfig.
"""

from __future__ import annotations

from typing import Any

from provisioning.plan.model import (
    ARGOCD_ACTIONS,
    GITOPS_SERVICE_ACCOUNT,
    GUARDRAIL_KINDS,
    IN_CLUSTER_SERVER,
    LABEL_PROJECT,
    ROLES,
    PlanInput,
    metadata_of,
    owned_labels,
)
from provisioning.plan.namespace import _pod_security


def argocd_objects(inputs: PlanInput) -> list[dict[str, Any]]:
    """The tenant's AppProject: only its own namespaces, its own repo, nothing cluster-wide."""
    tenant = inputs.tenant
    labels = owned_labels(inputs)
    apps_namespace = tenant.apps_namespace
    roles = []
    for role in ROLES:
        groups = tenant.groups.get(role, ())
        if groups:
            subject = f"proj:{tenant.slug}:{role}"
            roles.append(
                {
                    "name": role,
                    "description": f"Tenant {role}s, from their identity provider groups",
                    "groups": list(groups),
                    "policies": [
                        f"p, {subject}, applications, {action}, {tenant.slug}/*, allow"
                        for action in ARGOCD_ACTIONS[role]
                    ],
                }
            )
    return [
        # Holds only Application objects: nothing in it may run with privileges.
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": metadata_of(apps_namespace, {**labels, **_pod_security("restricted")}),
        },
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": metadata_of(tenant.slug, labels, inputs.cluster.argocd_namespace),
            "spec": {
                "description": f"Berth tenant {tenant.slug}: {tenant.name}",
                "sourceRepos": [tenant.repo_url] if tenant.repo_url else [],
                "sourceNamespaces": [apps_namespace],
                # Tenant slugs never prefix one another (Tenant.clean), so `<tenant>-*` is
                # exactly the tenant's namespaces; Berth's own ones in it are denied
                # (Argo CD >= 2.5 reads a leading "!" as a deny destination).
                "destinations": [
                    {"server": IN_CLUSTER_SERVER, "namespace": f"{tenant.slug}-*"},
                    {"server": IN_CLUSTER_SERVER, "namespace": f"!{apps_namespace}"},
                    {"server": IN_CLUSTER_SERVER, "namespace": f"!{tenant.slug}-*-kargo"},
                ],
                "clusterResourceWhitelist": [],
                "namespaceResourceBlacklist": [
                    {"group": group, "kind": kind} for group, kind in GUARDRAIL_KINDS
                ],
                "roles": roles,
                **_impersonation(inputs),
            },
        },
    ]


def _impersonation(inputs: PlanInput) -> dict[str, Any]:
    """Argo CD syncs as `berth-gitops` of the destination namespace (a ServiceAccount with no
    namespace part is looked up in the Application's destination namespace), so the tenant's
    RBAC bounds what its Applications deploy, not only the AppProject."""
    if not inputs.cluster.argocd_impersonation:
        return {}
    return {
        "destinationServiceAccounts": [
            {
                "server": IN_CLUSTER_SERVER,
                "namespace": f"{inputs.tenant.slug}-*",
                "defaultServiceAccount": GITOPS_SERVICE_ACCOUNT,
            }
        ]
    }


def kargo_objects(inputs: PlanInput) -> list[dict[str, Any]]:
    """Kargo Project (cluster-scoped, only ever created by Berth) and its ProjectConfig."""
    name = inputs.kargo_namespace
    labels = owned_labels(inputs, **{LABEL_PROJECT: inputs.project})
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": metadata_of(
                name,
                {**labels, **_pod_security("restricted"), "kargo.akuity.io/project": "true"},
            ),
        },
        {
            "apiVersion": "kargo.akuity.io/v1alpha1",
            "kind": "Project",
            "metadata": metadata_of(name, labels),
        },
        {
            "apiVersion": "kargo.akuity.io/v1alpha1",
            "kind": "ProjectConfig",
            "metadata": metadata_of(name, labels, name),
            "spec": {
                "promotionPolicies": [
                    {"stageSelector": {"name": "dev"}, "autoPromotionEnabled": True}
                ]
            },
        },
    ]
