"""The ClusterRoles Berth ships, bound to tenant groups by the tiers and to every
namespace's GitOps ServiceAccount by the plan, and what each means in plain words.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from provisioning.plan import (
    ARGOCD_APPLICATIONS_ROLE,
    FLUX_RECONCILER_ROLE,
    MANAGED_BY,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
)

RBAC_GROUP = "rbac.authorization.k8s.io"

# --- roles -------------------------------------------------------------------------------

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
BERTH_ROLES = (TENANT_EDIT_ROLE, TENANT_VIEW_ROLE)
ADMISSION_GROUP = "admissionregistration.k8s.io"
PART_OF = "app.kubernetes.io/part-of"


def _rule(groups: Iterable[str], resources: Iterable[str], verbs: Iterable[str]) -> dict[str, Any]:
    return {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}


# Kubernetes 1.30 `view` (system:aggregate-to-view), without the dead `extensions` group and
# the `bindings` pseudo-resource; plus reading the namespace's Roles and RoleBindings (who
# may do what here is no secret to the team) and cert-manager's objects.
VIEW_RULES: tuple[dict[str, Any], ...] = (
    _rule(
        [""],
        [
            "configmaps",
            "endpoints",
            "events",
            "limitranges",
            "namespaces",
            "namespaces/status",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "pods/log",
            "pods/status",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
            "serviceaccounts",
            "services",
            "services/status",
        ],
        READ,
    ),
    _rule(
        ["apps"],
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
        READ,
    ),
    _rule(["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], READ),
    _rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
    _rule(["discovery.k8s.io"], ["endpointslices"], READ),
    _rule(["events.k8s.io"], ["events"], READ),
    _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], READ),
    _rule(["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
    _rule([RBAC_GROUP], ["rolebindings", "roles"], READ),
    _rule(["cert-manager.io"], ["certificaterequests", "certificates", "issuers"], READ),
)

# Kubernetes 1.30 `edit` (system:aggregate-to-edit) on top of view, except:
# - nothing on resourcequotas, limitranges, roles, rolebindings beyond reading them;
# - networkpolicies: create/update/patch/delete but no deletecollection; RBAC cannot tell
#   Berth's policies from the team's, the admission policy does (PROTECT_POLICY);
# - no `impersonate` on serviceaccounts and no `serviceaccounts/token`: a token minted for
#   `berth-gitops` outlives the person's group membership (Berth removes people at their
#   next sign-in; a token stays valid until it expires) and lets people act as the GitOps
#   identity outside GitOps. (Whoever may create pods can still run one as any
#   ServiceAccount of the namespace; the GitOps one holds this same role, so that widens
#   nothing, and prod, where only GitOps writes, gives people no pods/create.)
# - no `events` writes (reading is enough; events are the cluster's record, not the team's).
EDIT_RULES: tuple[dict[str, Any], ...] = (
    *VIEW_RULES,
    _rule([""], ["secrets"], READ + WRITE),
    _rule(
        [""],
        [
            "configmaps",
            "persistentvolumeclaims",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
        ],
        WRITE,
    ),
    # `kubectl exec/attach/port-forward` over WebSockets (1.30+) is a GET that also needs create.
    _rule([""], ["pods/attach", "pods/exec", "pods/portforward"], ("get", "create")),
    _rule([""], ["pods/proxy", "services/proxy"], ("get", "create", "update", "patch", "delete")),
    _rule([""], ["pods/eviction"], ("create",)),
    _rule(
        ["apps"],
        [
            "daemonsets",
            "deployments",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
        WRITE,
    ),
    _rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
    _rule(["batch"], ["cronjobs", "jobs"], WRITE),
    _rule(["policy"], ["poddisruptionbudgets"], WRITE),
    _rule(["networking.k8s.io"], ["ingresses"], WRITE),
    _rule(["networking.k8s.io"], ["networkpolicies"], ("create", "update", "patch", "delete")),
    _rule(["coordination.k8s.io"], ["leases"], READ + WRITE),
    _rule(["cert-manager.io"], ["certificates"], WRITE),
)

ROLE_RULES: dict[str, tuple[dict[str, Any], ...]] = {
    TENANT_EDIT_ROLE: EDIT_RULES,
    TENANT_VIEW_ROLE: VIEW_RULES,
}

# What the tenant's root applies into its GitOps namespaces, as the tenant: Flux
# Kustomizations in <tenant>-gitops (each then applies as the same reconciler, bound to
# berth-tenant-edit in the tenant's namespaces) and, when Argo CD impersonates, Argo CD
# Applications in <tenant>-apps. Nothing else: no source, no Secret, no RBAC.
GITOPS_ROLE_RULES: dict[str, tuple[dict[str, Any], ...]] = {
    FLUX_RECONCILER_ROLE: (
        _rule(["kustomize.toolkit.fluxcd.io"], ["kustomizations"], READ + WRITE),
    ),
    ARGOCD_APPLICATIONS_ROLE: (_rule(["argoproj.io"], ["applications"], READ + WRITE),),
}

# What each of Berth's roles means, in the words the tenant page uses
# (tests/provisioning/guardrails/test_guardrails_roles.py checks each claim against the RBAC
# evaluator).
ROLE_SUMMARIES: dict[str, str] = {
    TENANT_EDIT_ROLE: (
        "deploy and change workloads, Services, Ingresses, ConfigMaps and Secrets, exec into "
        "pods and add their own NetworkPolicies; read quota, limits and RBAC but not change "
        "them, nor anything Berth created"
    ),
    TENANT_VIEW_ROLE: "read everything except Secrets; change nothing",
}

# What the GitOps identities' roles in the tenant's GitOps namespaces mean.
GITOPS_ROLE_SUMMARIES: dict[str, str] = {
    FLUX_RECONCILER_ROLE: "manage Flux Kustomizations in the tenant's GitOps namespace, each "
    "applying as this same reconciler; nothing else there",
    ARGOCD_APPLICATIONS_ROLE: "manage Argo CD Applications in the tenant's Applications "
    "namespace; nothing else there",
}

# Built-in roles that undo the guardrails from inside the namespace: refused in a plan.
LEAKY_ROLES: dict[str, str] = {
    "cluster-admin": "may do anything in the namespace, raising its own ResourceQuota included",
    "admin": "may write Roles and RoleBindings, so it can grant itself anything it holds",
    "edit": "may delete or rewrite the namespace's NetworkPolicies, Berth's default deny too",
}


def describe_role(cluster_role: str) -> str:
    """What a ClusterRole bound by a tier lets people do, in plain words."""
    if cluster_role in ROLE_SUMMARIES:
        return ROLE_SUMMARIES[cluster_role]
    if cluster_role in GITOPS_ROLE_SUMMARIES:
        return GITOPS_ROLE_SUMMARIES[cluster_role]
    if cluster_role in LEAKY_ROLES:
        return (
            f"Kubernetes' built-in {cluster_role}, which {LEAKY_ROLES[cluster_role]}: Berth "
            f"refuses to provision with it; use {TENANT_EDIT_ROLE} or {TENANT_VIEW_ROLE}"
        )
    if cluster_role == "view":
        return "Kubernetes' built-in view: read everything except Secrets and RBAC; change nothing"
    return (
        f"the custom ClusterRole {cluster_role}: not one of Berth's roles, so Berth cannot say "
        "what it allows and its guardrails rest on admission alone"
    )


def role_verbs(cluster_role: str) -> str:
    """The verbs a role gives, counted from its rules: what it writes by name, how much it
    reads. "" for a role Berth does not ship (it cannot see its rules)."""
    rules = {**ROLE_RULES, **GITOPS_ROLE_RULES}.get(cluster_role)
    if rules is None:
        return ""
    reads: set[str] = set()
    writes: set[str] = set()
    for rule in rules:
        verbs = set(rule["verbs"])
        for resource in rule["resources"]:
            if verbs & set(READ):
                reads.add(resource)
            if verbs & (set(WRITE) | {"create"}):
                writes.add(resource)
    wrote = f"writes {len(writes)}: {', '.join(sorted(writes))}" if writes else "writes nothing"
    return f"reads {len(reads)} resources; {wrote}"


def role_writes(cluster_role: str) -> bool | None:
    """Does the role let people change workloads? None: Berth cannot tell (a custom role)."""
    if cluster_role in (TENANT_VIEW_ROLE, "view"):
        return False
    if cluster_role == TENANT_EDIT_ROLE or cluster_role in LEAKY_ROLES:
        return True
    return None


def cluster_roles() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": f"{RBAC_GROUP}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": {MANAGED_BY: "berth", PART_OF: "berth"}},
            "rules": [dict(rule) for rule in rules],
        }
        for name, rules in {**ROLE_RULES, **GITOPS_ROLE_RULES}.items()
    ]
