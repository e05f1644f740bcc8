"""A project's fences: the tenant's Argo CD AppProject (shared by its projects), and a
project's Kargo side: the Kargo Project with its ProjectConfig, the repository credential
Kargo promotes with, and who of the tenant may see and promote its Stages.
"""

from __future__ import annotations

import json
from typing import Any

from provisioning.plan.credentials import credential_values, secret
from provisioning.plan.model import (
    ARGOCD_ACTIONS,
    GITOPS_SERVICE_ACCOUNT,
    GUARDRAIL_KINDS,
    IN_CLUSTER_SERVER,
    KARGO_VIEWER_ROLE,
    LABEL_ENVIRONMENT,
    LABEL_PROJECT,
    REPO_CREDENTIALS,
    ROLES,
    TENANT_EDIT_ROLE,
    KargoProject,
    PlanInput,
    metadata_of,
    owned_labels,
)
from provisioning.plan.namespace import pod_security, role_binding
from provisioning.plan.repository import public_url

KARGO = "kargo.akuity.io"
# A namespace that holds only GitOps objects: nothing in it may run or claim storage.
NOTHING_RUNS = {"pods": "0", "services": "0", "persistentvolumeclaims": "0"}
KARGO_CLAIMS = "rbac.kargo.akuity.io/claims"
KARGO_CRED_TYPE = "kargo.akuity.io/cred-type"


def appproject(inputs: PlanInput) -> dict[str, Any]:
    """The tenant's AppProject: only its own namespaces, its own repo, nothing cluster-wide."""
    tenant = inputs.tenant
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
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": metadata_of(tenant.slug, owned_labels(inputs), inputs.cluster.argocd_namespace),
        "spec": {
            "description": f"Berth tenant {tenant.slug}: {tenant.name}",
            "sourceRepos": [public_url(tenant.repo_url)] if tenant.repo_url else [],
            "sourceNamespaces": [tenant.apps_namespace],
            # Each of the tenant's namespaces by name, never a pattern: a namespace the
            # platform (or anyone) makes later under the tenant's prefix is not its. Among
            # them <tenant>-apps, where the root puts the Applications, and the projects'
            # Kargo namespaces, where it puts Stages and Warehouses (nothing runs in either:
            # a quota there allows no pod; the kinds that grant or bound rights are
            # blacklisted below). Never the Flux namespace.
            "destinations": [
                {"server": IN_CLUSTER_SERVER, "namespace": name}
                for name in fenced_namespaces(inputs)
            ],
            "clusterResourceWhitelist": [],
            "namespaceResourceBlacklist": [
                {"group": group, "kind": kind} for group, kind in GUARDRAIL_KINDS
            ],
            "roles": roles,
            **_impersonation(inputs),
        },
    }


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
                "namespace": name,
                "defaultServiceAccount": GITOPS_SERVICE_ACCOUNT,
            }
            for name in fenced_namespaces(inputs)
        ]
    }


def fenced_namespaces(inputs: PlanInput) -> list[str]:
    """The namespaces the tenant's Applications may deploy into, by name: its namespaces on
    the cluster as the records hold them, its Argo CD applications namespace, what this
    plan makes (namespaces, Kargo projects), less what it removes."""
    tenant = inputs.tenant
    names = {*tenant.namespaces, tenant.apps_namespace}
    names |= {ns.name for ns in inputs.namespaces}
    names |= {project.namespace for project in inputs.kargo_projects}
    names -= set(inputs.remove_namespaces)
    names -= {project.namespace for project in inputs.remove_kargo}
    names.discard(tenant.gitops_namespace)
    return sorted(names)


def promotable_stages(project: KargoProject, role: str) -> list[str]:
    """The project's Stages people of `role` may promote into: those of the tiers where
    they may write (Kargo's `promote` verb, by Stage name). In a tier where only GitOps
    writes (prod, as the demo tiers have it), nobody promotes by hand."""
    return sorted(
        tier.slug
        for tier in project.tiers
        if not tier.is_ephemeral and tier.cluster_roles.get(role) == TENANT_EDIT_ROLE
    )


def _kargo_people(
    inputs: PlanInput, project: KargoProject, labels: dict[str, str]
) -> list[dict[str, Any]]:
    """Kargo maps people to ServiceAccounts of the project namespace by their OIDC claims:
    one per tenant role, which sees the project and promotes what its tiers allow."""
    objects: list[dict[str, Any]] = []
    namespace = project.namespace
    for role in ROLES:
        groups = inputs.tenant.groups.get(role, ())
        if not groups:
            continue
        account = f"berth-{role}s"
        claims = json.dumps({"groups": list(groups)}, separators=(",", ":"))
        subject = [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]
        objects += [
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {
                    **metadata_of(account, labels, namespace),
                    "annotations": {KARGO_CLAIMS: claims},
                },
            },
            role_binding(f"{account}-view", namespace, KARGO_VIEWER_ROLE, subject, labels),
        ]
        stages = promotable_stages(project, role)
        if stages:
            objects += [
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "Role",
                    "metadata": metadata_of(f"{account}-promote", labels, namespace),
                    "rules": [
                        {
                            "apiGroups": [KARGO],
                            "resources": ["stages"],
                            "verbs": ["promote"],
                            "resourceNames": stages,
                        },
                        {"apiGroups": [KARGO], "resources": ["promotions"], "verbs": ["create"]},
                    ],
                },
                role_binding(
                    f"{account}-promote",
                    namespace,
                    f"{account}-promote",
                    subject,
                    labels,
                    role_kind="Role",
                ),
            ]
    return objects


def kargo_objects(inputs: PlanInput, project: KargoProject) -> list[dict[str, Any]]:
    """Kargo Project (cluster-scoped, only ever created by Berth), its ProjectConfig, the
    repository credential Kargo pushes promotions with, and the tenant's people."""
    name = project.namespace
    labels = owned_labels(inputs, **{LABEL_PROJECT: project.name})
    objects = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": metadata_of(
                name,
                {**labels, **pod_security("restricted"), "kargo.akuity.io/project": "true"},
            ),
        },
        {
            "apiVersion": f"{KARGO}/v1alpha1",
            "kind": "Project",
            "metadata": metadata_of(name, labels),
        },
        {
            "apiVersion": f"{KARGO}/v1alpha1",
            "kind": "ProjectConfig",
            "metadata": metadata_of(name, labels, name),
            "spec": {
                "promotionPolicies": [
                    {"stageSelector": {"name": "dev"}, "autoPromotionEnabled": True},
                    # Review apps follow the Warehouse without anyone promoting them.
                    {
                        "stageSelector": {
                            "matchExpressions": [{"key": LABEL_ENVIRONMENT, "operator": "Exists"}]
                        },
                        "autoPromotionEnabled": True,
                    },
                ]
            },
        },
    ]
    credential = inputs.tenant.credential
    if credential is not None and inputs.tenant.repo_url:
        values = {"repoURL": public_url(inputs.tenant.repo_url)}
        values |= credential_values(credential, https=("username", "password"), ssh="sshPrivateKey")
        objects.append(secret(REPO_CREDENTIALS, name, {**labels, KARGO_CRED_TYPE: "git"}, values))
    # Nothing runs in a Kargo project's namespace (Kargo promotes from its own).
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata_of("berth-quota", labels, name),
            "spec": {"hard": dict(NOTHING_RUNS)},
        }
    )
    return objects + _kargo_people(inputs, project, labels)
