"""What a tenant's people and GitOps identity may do in its namespaces, in plain words,
read off the ClusterRoles Berth binds (provisioning.guardrails); and the access map: every
right the tenant's plans grant, read off the objects they apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from provisioning.guardrails import describe_role, role_verbs, role_writes
from provisioning.plan import (
    GITOPS_SERVICE_ACCOUNT,
    KARGO_VIEWER_ROLE,
    RECONCILER_SERVICE_ACCOUNT,
    ROLES,
    TENANT_EDIT_ROLE,
)
from provisioning.plan.projects import KARGO_CLAIMS
from tenants.choices import Role
from tenants.models import EnvironmentTier, Tenant
from tenants.provisioner import ARGOCD as ARGOCD_SYSTEM
from tenants.provisioner import FLUX as FLUX_SYSTEM
from tenants.provisioner import KARGO as KARGO_SYSTEM
from tenants.provisioner import KUBERNETES, Grant


def effective_permissions(tenant: Tenant) -> list[dict]:
    """What Kubernetes lets the tenant's owners, members, viewers and GitOps identity do in
    the namespaces of each tier the tenant may use (every tier when none is listed), in
    plain words (provisioning.guardrails.describe_role)."""
    tiers = list(tenant.allowed_tiers.all()) or list(EnvironmentTier.objects.all())
    rows = []
    for tier in tiers:
        people = [
            {
                "label": label,
                "groups": tenant.groups_for(role),
                "cluster_role": tier.cluster_role_for(role),
                "summary": describe_role(tier.cluster_role_for(role))
                if tenant.groups_for(role)
                else "nothing: the tenant names no group for them",
            }
            for role, label in (
                (Role.OWNER, "Owners"),
                (Role.MEMBER, "Members"),
                (Role.VIEWER, "Viewers"),
            )
        ]
        gitops = {
            "label": f"GitOps ({GITOPS_SERVICE_ACCOUNT})",
            "groups": [],
            "cluster_role": TENANT_EDIT_ROLE,
            "summary": describe_role(TENANT_EDIT_ROLE),
        }
        writers = [
            entry
            for entry in people
            if entry["groups"] and role_writes(entry["cluster_role"]) is not False
        ]
        rows.append({"tier": tier, "entries": [*people, gitops], "gitops_only": not writers})
    return rows


# --- the access map: what the tenant's plans grant, read off the objects they apply --------


def grants_in(tenant: str, cluster: str, objects: Iterable[dict[str, Any]]) -> list[Grant]:
    """The rights these plan objects give (read off the RoleBindings, the AppProject's roles
    and the Kargo ServiceAccounts), in the order people read them: Kubernetes, Argo CD,
    Kargo, then the GitOps identities."""
    objects = list(objects)
    bindings = [o for o in objects if o["kind"] == "RoleBinding"]
    roles = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "Role"
    }
    grants: list[Grant] = []
    for binding in bindings:
        grants += _group_bindings(tenant, cluster, binding)
    for project in (o for o in objects if o["kind"] == "AppProject"):
        grants += _argocd_roles(tenant, cluster, project)
    for account in (
        o
        for o in objects
        if o["kind"] == "ServiceAccount" and KARGO_CLAIMS in o["metadata"].get("annotations", {})
    ):
        grants += _kargo_people(tenant, cluster, account, bindings, roles)
    for binding in bindings:
        grants += _identity_bindings(tenant, cluster, binding, objects)
    return grants


def _where(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{obj['kind']} {meta['namespace']}/{meta['name']}"


def _tenant_role(account_or_binding: str) -> str:
    # Berth names the people's bindings and Kargo accounts berth-<role>s.
    name = account_or_binding.removeprefix("berth-").split("-")[0]
    return next((role for role in ROLES if name == f"{role}s"), "")


def _group_bindings(tenant: str, cluster: str, binding: dict[str, Any]) -> list[Grant]:
    role = binding["roleRef"]["name"]
    namespace = binding["metadata"]["namespace"]
    return [
        Grant(
            tenant=tenant,
            cluster=cluster,
            system=KUBERNETES,
            group=subject["name"],
            tenant_role=_tenant_role(binding["metadata"]["name"]),
            namespace=namespace,
            obj=_where(binding),
            role=role,
            summary=describe_role(role),
            verbs=role_verbs(role),
        )
        for subject in binding["subjects"]
        if subject["kind"] == "Group"
    ]


def _argocd_roles(tenant: str, cluster: str, project: dict[str, Any]) -> list[Grant]:
    grants = []
    for role in project["spec"].get("roles", []):
        # "p, proj:<tenant>:<role>, applications, <action>, <tenant>/*, allow"
        actions = [policy.split(", ")[3] for policy in role["policies"]]
        for group in role["groups"]:
            grants.append(
                Grant(
                    tenant=tenant,
                    cluster=cluster,
                    system=ARGOCD_SYSTEM,
                    group=group,
                    tenant_role=role["name"],
                    namespace=project["metadata"]["namespace"],
                    obj=_where(project),
                    role=f"proj:{project['metadata']['name']}:{role['name']}",
                    summary=f"Argo CD: {', '.join(actions)} on the tenant's Applications "
                    f"({project['metadata']['name']}/*)",
                )
            )
    return grants


def _kargo_people(
    tenant: str, cluster: str, account: dict[str, Any], bindings: list[dict[str, Any]], roles: dict
) -> list[Grant]:
    meta = account["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    sees, promotes = [], []
    for binding in bindings:
        if binding["metadata"]["namespace"] != namespace or not any(
            s["kind"] == "ServiceAccount" and s["name"] == name for s in binding["subjects"]
        ):
            continue
        ref = binding["roleRef"]
        if ref["name"] == KARGO_VIEWER_ROLE:
            sees.append(f"see the Kargo project {namespace}")
        elif ref["kind"] == "Role" and (namespace, ref["name"]) in roles:
            for rule in roles[(namespace, ref["name"])]["rules"]:
                if "promote" in rule["verbs"]:
                    promotes.append(f"promote into {', '.join(rule['resourceNames'])}")
    groups = json.loads(meta["annotations"][KARGO_CLAIMS]).get("groups", [])
    return [
        Grant(
            tenant=tenant,
            cluster=cluster,
            system=KARGO_SYSTEM,
            group=group,
            tenant_role=_tenant_role(name),
            namespace=namespace,
            obj=_where(account),
            role=name,
            summary="Kargo: " + "; ".join(sees + promotes),
        )
        for group in groups
    ]


def _identity_bindings(
    tenant: str, cluster: str, binding: dict[str, Any], objects: list[dict[str, Any]]
) -> list[Grant]:
    """What the tenant's files may do once an engine applies them: the ServiceAccounts Flux
    and Argo CD act as."""
    role = binding["roleRef"]["name"]
    grants = []
    for subject in binding["subjects"]:
        if subject["kind"] != "ServiceAccount":
            continue
        if subject["name"] == RECONCILER_SERVICE_ACCOUNT:
            system = FLUX_SYSTEM
        elif subject["name"] == GITOPS_SERVICE_ACCOUNT and _argocd_impersonates(objects):
            system = ARGOCD_SYSTEM
        else:
            continue
        grants.append(
            Grant(
                tenant=tenant,
                cluster=cluster,
                system=system,
                group="",
                tenant_role="",
                namespace=binding["metadata"]["namespace"],
                obj=_where(binding),
                role=role,
                summary=describe_role(role),
                verbs=role_verbs(role),
                identity=f"ServiceAccount {subject['namespace']}/{subject['name']}",
            )
        )
    return grants


def _argocd_impersonates(objects: list[dict[str, Any]]) -> bool:
    return any(
        o["kind"] == "AppProject" and o["spec"].get("destinationServiceAccounts") for o in objects
    )
