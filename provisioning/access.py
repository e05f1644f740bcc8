"""What a tenant's people and GitOps identity may do in its namespaces, in plain words,
read off the ClusterRoles Berth binds (provisioning.guardrails).
"""

from __future__ import annotations

from provisioning.guardrails import describe_role, role_writes
from provisioning.plan import GITOPS_SERVICE_ACCOUNT, TENANT_EDIT_ROLE
from tenants.choices import Role
from tenants.models import EnvironmentTier, Tenant


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
            for role, label in ((Role.OWNER, "Owners"), (Role.MEMBER, "Members"),
                                (Role.VIEWER, "Viewers"))
        ]
        gitops = {
            "label": f"GitOps ({GITOPS_SERVICE_ACCOUNT})",
            "groups": [],
            "cluster_role": TENANT_EDIT_ROLE,
            "summary": describe_role(TENANT_EDIT_ROLE),
        }
        writers = [
            entry for entry in people
            if entry["groups"] and role_writes(entry["cluster_role"]) is not False
        ]
        rows.append({"tier": tier, "entries": [*people, gitops], "gitops_only": not writers})
    return rows
