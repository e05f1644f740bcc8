"""Berth's own rules for a tenant's plan, checked before anything is applied: which kinds a
plan may hold, inside the tenant's prefix, labelled as Berth's, binding only safe roles
to the tenant's own groups, an AppProject that keeps the tenant in its namespaces.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from provisioning.guardrails.roles import BERTH_ROLES, LEAKY_ROLES, RBAC_GROUP
from provisioning.plan import (
    GITOPS_SERVICE_ACCOUNT,
    GUARDRAIL_KINDS,
    LABEL_TENANT,
    MANAGED_BY,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
    PlanInput,
)

# The kinds a tenant's plan may hold, by API group; anything else (a ClusterRoleBinding,
# a ClusterRole, a Role, a webhook...) is refused before anything is applied.
PLAN_KINDS = {
    ("", "Namespace"),
    ("", "ServiceAccount"),
    ("", "ResourceQuota"),
    ("", "LimitRange"),
    ("networking.k8s.io", "NetworkPolicy"),
    (RBAC_GROUP, "RoleBinding"),
    ("argoproj.io", "AppProject"),
    ("kargo.akuity.io", "Project"),
    ("kargo.akuity.io", "ProjectConfig"),
}
CLUSTER_SCOPED = {("", "Namespace"), ("kargo.akuity.io", "Project")}


def guardrail_problems(obj: Mapping[str, Any], inputs: PlanInput) -> list[str]:
    """Berth's own rules for one object of a tenant's plan (empty when it keeps them)."""
    tenant = inputs.tenant.slug
    prefix = f"{tenant}-"
    try:
        group = obj["apiVersion"].rpartition("/")[0]
        kind, meta = obj["kind"], obj["metadata"]
        name, namespace = meta["name"], meta.get("namespace", "")
    except (KeyError, TypeError, AttributeError):
        return ["not a Kubernetes object (apiVersion, kind, metadata.name)"]
    if (group, kind) not in PLAN_KINDS:
        return [
            f"a tenant's plan never holds a {kind} ({group or 'core'}): Berth applies only "
            f"namespaces and what fences them in"
        ]
    problems = []
    labels = meta.get("labels") or {}
    if labels.get(MANAGED_BY) != "berth" or labels.get(LABEL_TENANT) != tenant:
        problems.append(
            f"not labelled as Berth's for tenant {tenant} ({MANAGED_BY}=berth, "
            f"{LABEL_TENANT}={tenant}), so the admission policy would not protect it"
        )
    if kind == "AppProject":
        if namespace != inputs.cluster.argocd_namespace or name != tenant:
            problems.append(
                f"the tenant's AppProject is {inputs.cluster.argocd_namespace}/{tenant}, "
                f"not {namespace}/{name}"
            )
        problems += appproject_problems(obj, tenant)
    elif (group, kind) in CLUSTER_SCOPED:
        if not name.startswith(prefix):
            problems.append(f"{kind} {name} is outside the tenant's prefix {prefix}")
    elif not namespace.startswith(prefix):
        problems.append(
            f"namespace {namespace or '(none)'} is outside the tenant's prefix {prefix}"
        )
    if kind == "RoleBinding":
        problems += _role_binding_problems(obj, inputs)
    if kind != "AppProject":  # it lives in the platform's Argo CD namespace, checked above
        where = name if (group, kind) in CLUSTER_SCOPED else namespace
        problems += claim_problems(where, inputs)
    return problems


# What a namespace a tenant's plan creates, changes or deletes may be in the registry.
TENANT_NAMESPACES = frozenset({"tier", "ephemeral", "shared"})


def claim_problems(name: str, inputs: PlanInput, *, deleting: bool = False) -> list[str]:
    """A plan touches a namespace only when the registry holds it for this request's owner
    and for what the plan does there: the request's own namespaces, the project's Kargo
    namespace, the tenant's Argo CD applications namespace. Skipped for inputs made by hand
    (`inputs.claims` None)."""
    if inputs.claims is None:
        return []
    own = {ns.name for ns in inputs.namespaces} | set(inputs.remove_namespaces)
    if name in own:
        expected = TENANT_NAMESPACES
    elif not deleting and name == inputs.kargo_namespace:
        expected = frozenset({"kargo"})
    elif not deleting and name == inputs.tenant.apps_namespace:
        expected = frozenset({"argocd_apps"})
    else:
        return [f"{name} is not one of this request's namespaces"]
    claim = inputs.claims.get(name)
    if claim is None:
        return [f"{name} is not claimed for this request: Berth touches only registered names"]
    if claim.tenant != inputs.tenant.slug or claim.purpose not in expected:
        owner = claim.tenant or "the platform"
        return [f"{name} is registered as {claim.purpose} of {owner}, not what this plan makes "
                "of it: Berth never touches a namespace that belongs to something else"]
    if claim.purpose == "kargo" and claim.app != inputs.project:
        return [f"{name} is the Kargo namespace of {claim.app}, not of {inputs.project}"]
    return []


def _role_binding_problems(binding: Mapping[str, Any], inputs: PlanInput) -> list[str]:
    problems = []
    ref = binding.get("roleRef") or {}
    allowed = set(BERTH_ROLES)
    for ns in inputs.namespaces:
        allowed.update(ns.tier.cluster_roles.values())
    if ref.get("kind") != "ClusterRole":
        problems.append(f"binds a {ref.get('kind')}: Berth binds only ClusterRoles")
    elif ref.get("name") in LEAKY_ROLES:
        problems.append(
            f"binds {ref['name']}, which {LEAKY_ROLES[ref['name']]}: the tier must use "
            f"{TENANT_EDIT_ROLE} or {TENANT_VIEW_ROLE}"
        )
    elif ref.get("name") not in allowed:
        problems.append(f"binds {ref.get('name')}, neither a tier's role nor one of Berth's")
    namespace = binding["metadata"].get("namespace", "")
    groups = {group for members in inputs.tenant.groups.values() for group in members}
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            if subject.get("namespace") != namespace or name != GITOPS_SERVICE_ACCOUNT:
                problems.append(
                    f"grants ServiceAccount {subject.get('namespace')}/{name}: only the "
                    f"namespace's own {GITOPS_SERVICE_ACCOUNT}"
                )
        elif kind == "Group":
            if name.startswith("system:") or name not in groups:
                problems.append(f"grants group {name}, not one of the tenant's groups")
        else:
            problems.append(f"grants {kind} {name}: Berth binds groups and its ServiceAccount")
    return problems


def appproject_problems(project: Mapping[str, Any], tenant: str) -> list[str]:
    spec = project.get("spec") or {}
    problems = []
    for group, kind in GUARDRAIL_KINDS:
        if appproject_permits(project, group, kind, namespaced=kind != "Project"):
            problems.append(f"lets the tenant's Applications deploy {kind} ({group or 'core'})")
    if spec.get("clusterResourceWhitelist"):
        problems.append("lets the tenant's Applications deploy cluster-scoped resources")
    prefix = f"{tenant}-"
    for destination in spec.get("destinations") or []:
        pattern = destination.get("namespace", "")
        if not (pattern.startswith("!") or pattern.startswith(prefix)):
            problems.append(f"destination namespace {pattern!r} is outside {prefix}*")
    for source in spec.get("sourceNamespaces") or []:
        if not source.startswith(prefix):
            problems.append(f"source namespace {source!r} is outside {prefix}*")
    return problems


# --- offline evaluators ------------------------------------------------------------------


def appproject_permits(
    project: Mapping[str, Any], group: str, kind: str, *, namespaced: bool = True
) -> bool:
    """Argo CD's AppProject.IsGroupKindPermitted: may an Application of this project deploy
    kind K of group G? Namespaced kinds: allowed unless a (present) whitelist leaves them
    out or the blacklist names them; cluster-scoped kinds: only when whitelisted and not
    blacklisted. Entries match with globs."""
    spec = project.get("spec") or {}

    def listed(entries: Iterable[Mapping[str, str]]) -> bool:
        return any(
            fnmatch.fnmatchcase(kind, entry.get("kind", ""))
            and fnmatch.fnmatchcase(group, entry.get("group", ""))
            for entry in entries
        )

    if namespaced:
        whitelist = spec.get("namespaceResourceWhitelist")
        blacklist = spec.get("namespaceResourceBlacklist") or []
        whitelisted = whitelist is None or (len(whitelist) > 0 and listed(whitelist))
        return whitelisted and not listed(blacklist)
    whitelist = spec.get("clusterResourceWhitelist") or []
    blacklist = spec.get("clusterResourceBlacklist") or []
    return listed(whitelist) and not listed(blacklist)
