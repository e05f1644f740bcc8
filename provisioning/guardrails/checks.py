"""Berth's own rules for a tenant's plan, checked before anything is applied: which kinds a
plan may hold, inside the tenant's prefix, labelled as Berth's, binding only safe roles
to the tenant's own groups and GitOps identities, an AppProject that keeps the tenant in its
namespaces, roots and credentials only where Berth puts them and reading only the tenant's
repository.
"""

from __future__ import annotations

import base64
import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from provisioning.guardrails.roles import BERTH_ROLES, LEAKY_ROLES, RBAC_GROUP
from provisioning.plan import (
    ARGOCD,
    ARGOCD_APPLICATIONS_ROLE,
    DOMAINS_CONFIG,
    FLUX,
    FLUX_RECONCILER_ROLE,
    GITOPS_SERVICE_ACCOUNT,
    GITOPS_SOURCES_CONFIG,
    GUARDRAIL_KINDS,
    KARGO_VIEWER_ROLE,
    LABEL_ACCESS_GRANT,
    LABEL_TENANT,
    MANAGED_BY,
    RECONCILER_SERVICE_ACCOUNT,
    REPO_CREDENTIALS,
    ROOT_NAME,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
    PlanInput,
    flux_url,
    public_url,
)

# The kinds a tenant's plan may hold, by API group; anything else (a ClusterRoleBinding,
# a ClusterRole, a webhook...) is refused before anything is applied.
PLAN_KINDS = {
    ("", "Namespace"),
    ("", "ServiceAccount"),
    ("", "ResourceQuota"),
    ("", "LimitRange"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("networking.k8s.io", "NetworkPolicy"),
    (RBAC_GROUP, "Role"),
    (RBAC_GROUP, "RoleBinding"),
    ("argoproj.io", "AppProject"),
    ("argoproj.io", "Application"),
    ("kargo.akuity.io", "Project"),
    ("kargo.akuity.io", "ProjectConfig"),
    ("source.toolkit.fluxcd.io", "GitRepository"),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"),
}
CLUSTER_SCOPED = {("", "Namespace"), ("kargo.akuity.io", "Project")}
CONFIG_MAPS = frozenset({DOMAINS_CONFIG, GITOPS_SOURCES_CONFIG})
KARGO_PROMOTE_RULES = (
    {"apiGroups": ["kargo.akuity.io"], "resources": ["stages"], "verbs": ["promote"]},
    {"apiGroups": ["kargo.akuity.io"], "resources": ["promotions"], "verbs": ["create"]},
)


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
            f"namespaces, what fences them in and the tenant's GitOps roots"
        ]
    problems = []
    labels = meta.get("labels") or {}
    if labels.get(MANAGED_BY) != "berth" or labels.get(LABEL_TENANT) != tenant:
        problems.append(
            f"not labelled as Berth's for tenant {tenant} ({MANAGED_BY}=berth, "
            f"{LABEL_TENANT}={tenant}), so the admission policy would not protect it"
        )
    argocd = inputs.cluster.argocd_namespace
    in_argocd = bool(argocd) and namespace == argocd
    if kind == "AppProject":
        if not in_argocd or name != tenant:
            problems.append(f"the tenant's AppProject is {argocd}/{tenant}, not {namespace}/{name}")
        problems += appproject_problems(
            obj, tenant, gitops_namespace=inputs.tenant.gitops_namespace
        )
    elif kind == "Secret" and in_argocd:
        problems += _argocd_secret_problems(obj, inputs)
    elif (group, kind) in CLUSTER_SCOPED:
        if not name.startswith(prefix):
            problems.append(f"{kind} {name} is outside the tenant's prefix {prefix}")
    elif not namespace.startswith(prefix):
        problems.append(
            f"namespace {namespace or '(none)'} is outside the tenant's prefix {prefix}"
        )
    problems += _placement_problems(obj, inputs, group, kind, name, namespace)
    if kind == "RoleBinding":
        problems += _role_binding_problems(obj, inputs)
    if not in_argocd:  # the platform's Argo CD namespace: checked above
        where = name if (group, kind) in CLUSTER_SCOPED else namespace
        problems += claim_problems(where, inputs)
    return problems


def _placement_problems(
    obj: Mapping[str, Any], inputs: PlanInput, group: str, kind: str, name: str, namespace: str
) -> list[str]:
    """The GitOps roots, credentials and parameters exist once each, where Berth puts them,
    pointing at the tenant's own repository and running as the tenant."""
    tenant = inputs.tenant
    spec = obj.get("spec") or {}
    kargo = {project.namespace for project in inputs.kargo_projects}
    if kind == "ConfigMap" and name not in CONFIG_MAPS:
        return [f"ConfigMap {name}: Berth applies only {', '.join(sorted(CONFIG_MAPS))}"]
    if (
        kind == "Secret"
        and namespace != inputs.cluster.argocd_namespace
        and not (
            name == REPO_CREDENTIALS
            and (namespace == tenant.gitops_namespace or namespace in kargo)
        )
    ):
        return [
            f"Secret {namespace}/{name}: Berth's repository credentials are "
            f"{REPO_CREDENTIALS} in the tenant's GitOps or Kargo namespace"
        ]
    if kind == "Application":
        source = spec.get("source") or {}
        if (name, namespace) != (ROOT_NAME, tenant.apps_namespace):
            return [
                f"Application {namespace}/{name}: Berth applies only the root "
                f"{tenant.apps_namespace}/{ROOT_NAME}"
            ]
        if (
            spec.get("project") != tenant.slug
            or (spec.get("destination") or {}).get("namespace") != tenant.apps_namespace
            or source.get("repoURL") != public_url(tenant.repo_url)
        ):
            return [
                "the root Application must use the tenant's AppProject, read the tenant's "
                "repository and apply into its applications namespace"
            ]
    if kind == "GitRepository" and (
        (name, namespace) != (tenant.slug, tenant.gitops_namespace)
        or spec.get("url") != flux_url(tenant.repo_url)
    ):
        return [
            f"GitRepository {namespace}/{name}: Berth's only source is the tenant's "
            f"repository, {tenant.gitops_namespace}/{tenant.slug}"
        ]
    if kind == "Kustomization":
        ref = spec.get("sourceRef") or {}
        if (name, namespace) != (ROOT_NAME, tenant.gitops_namespace) or (
            spec.get("serviceAccountName") != RECONCILER_SERVICE_ACCOUNT
            or spec.get("targetNamespace") != tenant.gitops_namespace
            or ref.get("namespace", namespace) != namespace
            or ref.get("name") != tenant.slug
        ):
            return [
                f"Kustomization {namespace}/{name}: Berth's only Kustomization is the "
                f"root {tenant.gitops_namespace}/{ROOT_NAME}, applying the tenant's "
                f"source into that namespace as {RECONCILER_SERVICE_ACCOUNT}"
            ]
    if kind == "Role":
        rules = [
            {key: value for key, value in rule.items() if key != "resourceNames"}
            for rule in obj.get("rules") or []
        ]
        if (
            namespace not in kargo
            or not name.endswith("-promote")
            or any(rule not in KARGO_PROMOTE_RULES for rule in rules)
        ):
            return [
                f"Role {namespace}/{name}: Berth's only Roles let people promote the "
                "project's Kargo Stages"
            ]
    return []


def _argocd_secret_problems(secret: Mapping[str, Any], inputs: PlanInput) -> list[str]:
    tenant = inputs.tenant.slug
    name = secret["metadata"]["name"]
    try:
        project = base64.b64decode((secret.get("data") or {}).get("project", "")).decode()
    except (ValueError, UnicodeDecodeError):
        project = ""
    if name != f"berth-repo-{tenant}" or project != tenant:
        return [
            f"Secret {name} in Argo CD's namespace: Berth writes only berth-repo-{tenant}, "
            f"a repository scoped to the tenant's AppProject {tenant}"
        ]
    return []


# What a namespace a tenant's plan creates, changes or deletes may be in the registry.
TENANT_NAMESPACES = frozenset({"tier", "ephemeral", "shared"})


def claim_problems(name: str, inputs: PlanInput, *, deleting: bool = False) -> list[str]:
    """A plan touches a namespace only when the registry holds it for this request's owner
    and for what the plan does there: the request's own namespaces, the project's Kargo
    namespace, the tenant's Argo CD applications and Flux GitOps namespaces. Deleting,
    only what the request decommissions. Skipped for inputs made by hand (`inputs.claims`
    None)."""
    if inputs.claims is None:
        return []
    own = {ns.name for ns in inputs.namespaces} | set(inputs.remove_namespaces)
    own |= {grant.namespace for grant in inputs.grants}
    kargo = {
        project.namespace: project.name
        for project in (inputs.remove_kargo if deleting else inputs.kargo_projects)
    }
    if name in own:
        expected = TENANT_NAMESPACES
    elif name in kargo:
        expected = frozenset({"kargo"})
    elif name == inputs.tenant.apps_namespace and (
        not deleting or ARGOCD in inputs.remove_tenant_engines
    ):
        expected = frozenset({"argocd_apps"})
    elif name == inputs.tenant.gitops_namespace and (
        not deleting or FLUX in inputs.remove_tenant_engines
    ):
        expected = frozenset({"gitops"})
    else:
        return [f"{name} is not one of this request's namespaces"]
    claim = inputs.claims.get(name)
    if claim is None:
        return [f"{name} is not claimed for this request: Berth touches only registered names"]
    if claim.tenant != inputs.tenant.slug or claim.purpose not in expected:
        owner = claim.tenant or "the platform"
        return [
            f"{name} is registered as {claim.purpose} of {owner}, not what this plan makes "
            "of it: Berth never touches a namespace that belongs to something else"
        ]
    if claim.purpose == "kargo" and claim.app != kargo.get(name):
        return [f"{name} is the Kargo namespace of {claim.app}, not of {kargo.get(name)}"]
    return []


def _grant_problems(binding: Mapping[str, Any], inputs: PlanInput, grant_id: str) -> list[str]:
    """An access grant's binding: the ClusterRole its grant names, one its namespace's tier
    offers (never a leaky one), to that one person, in that namespace alone."""
    grants = {
        str(grant.id): grant
        for grant in (*inputs.grants, *(g for ns in inputs.namespaces for g in ns.grants))
    }
    grant = grants.get(grant_id)
    if grant is None:
        return [f"carries access grant {grant_id}, which this plan does not hold"]
    ref = binding.get("roleRef") or {}
    problems = []
    if binding["metadata"].get("namespace") != grant.namespace:
        problems.append(f"access grant {grant_id} binds in {grant.namespace} alone")
    if ref.get("kind") != "ClusterRole" or ref.get("name") != grant.cluster_role:
        problems.append(f"access grant {grant_id} binds {grant.cluster_role} and nothing else")
    elif ref.get("name") in LEAKY_ROLES:
        problems.append(
            f"access grant {grant_id} binds {ref['name']}, which {LEAKY_ROLES[ref['name']]}"
        )
    elif ref.get("name") not in grant.offered:
        problems.append(
            f"access grant {grant_id} binds {ref.get('name')}, not a role its tier offers "
            f"({', '.join(grant.offered) or 'none'})"
        )
    wanted = [{"apiGroup": RBAC_GROUP, "kind": "User", "name": grant.subject}]
    if binding.get("subjects") != wanted:
        problems.append(f"access grant {grant_id} binds its person ({grant.subject}) alone")
    return problems


def _role_binding_problems(binding: Mapping[str, Any], inputs: PlanInput) -> list[str]:
    grant_id = (binding["metadata"].get("labels") or {}).get(LABEL_ACCESS_GRANT)
    if grant_id is not None:
        return _grant_problems(binding, inputs, grant_id)
    problems = []
    ref = binding.get("roleRef") or {}
    namespace = binding["metadata"].get("namespace", "")
    tenant = inputs.tenant
    allowed: set[str] = set(BERTH_ROLES)
    for ns in inputs.namespaces:
        allowed.update(ns.tier.cluster_roles.values())
    # Berth's GitOps roles, each only where it belongs.
    allowed |= {FLUX_RECONCILER_ROLE} if namespace == tenant.gitops_namespace else set()
    allowed |= {ARGOCD_APPLICATIONS_ROLE} if namespace == tenant.apps_namespace else set()
    kargo = {project.namespace for project in inputs.kargo_projects}
    allowed |= {KARGO_VIEWER_ROLE} if namespace in kargo else set()
    promote_role = (
        ref.get("kind") == "Role"
        and namespace in kargo
        and ref.get("name", "").endswith("-promote")
    )
    if ref.get("kind") != "ClusterRole" and not promote_role:
        problems.append(
            f"binds a {ref.get('kind')}: Berth binds ClusterRoles (and, in a "
            "Kargo namespace, its promote Roles)"
        )
    elif ref.get("name") in LEAKY_ROLES:
        problems.append(
            f"binds {ref['name']}, which {LEAKY_ROLES[ref['name']]}: the tier must use "
            f"{TENANT_EDIT_ROLE} or {TENANT_VIEW_ROLE}"
        )
    elif not promote_role and ref.get("name") not in allowed:
        problems.append(
            f"binds {ref.get('name')}, neither a tier's role nor one of Berth's where it belongs"
        )
    groups = {group for members in tenant.groups.values() for group in members}
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            where = subject.get("namespace")
            own = where == namespace and (
                name == GITOPS_SERVICE_ACCOUNT
                or (namespace == tenant.gitops_namespace and name == RECONCILER_SERVICE_ACCOUNT)
                or (namespace in kargo and name.startswith("berth-"))
            )
            reconciler = where == tenant.gitops_namespace and name == RECONCILER_SERVICE_ACCOUNT
            if not (own or reconciler):
                problems.append(
                    f"grants ServiceAccount {where}/{name}: only the namespace's own "
                    f"{GITOPS_SERVICE_ACCOUNT} or the tenant's {RECONCILER_SERVICE_ACCOUNT}"
                )
        elif kind == "Group":
            if name.startswith("system:") or name not in groups:
                problems.append(f"grants group {name}, not one of the tenant's groups")
        else:
            problems.append(f"grants {kind} {name}: Berth binds groups and its ServiceAccounts")
    return problems


# What Argo CD reads as a pattern in a destination's namespace (glob, and "!" to deny).
GLOB_CHARACTERS = frozenset("*?[]{}!")


def appproject_problems(
    project: Mapping[str, Any], tenant: str, *, gitops_namespace: str = ""
) -> list[str]:
    spec = project.get("spec") or {}
    problems = []
    for group, kind in GUARDRAIL_KINDS:
        if appproject_permits(project, group, kind, namespaced=kind != "Project"):
            problems.append(f"lets the tenant's Applications deploy {kind} ({group or 'core'})")
    if spec.get("clusterResourceWhitelist"):
        problems.append("lets the tenant's Applications deploy cluster-scoped resources")
    prefix = f"{tenant}-"
    for field_name in ("destinations", "destinationServiceAccounts"):
        for destination in spec.get(field_name) or []:
            name = destination.get("namespace", "")
            if GLOB_CHARACTERS & set(name):
                problems.append(
                    f"{field_name} namespace {name!r} is a pattern: a namespace made later "
                    "could match it; Berth names each of the tenant's namespaces"
                )
            elif not name.startswith(prefix) or name == gitops_namespace:
                problems.append(f"{field_name} namespace {name!r} is not one of the tenant's")
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
