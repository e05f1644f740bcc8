"""Guardrails that hold: nothing a tenant can edit may widen its own permissions.

Pure data and pure checks, no I/O (docs/guardrails.md explains the model):

- **Roles.** The ClusterRoles Berth ships, bound to tenant groups by the tiers and to every
  namespace's GitOps ServiceAccount by the plan: `berth-tenant-edit` (Kubernetes 1.30's
  `edit` minus writes to ResourceQuota, LimitRange, Roles and RoleBindings, minus
  `impersonate` and ServiceAccount tokens) and `berth-tenant-view` (`view`, plus reading
  Roles and RoleBindings). Every rule spells out its groups, resources and verbs: no
  wildcards, so a new API can never become writable by accident.
- **Admission.** ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, Kubernetes
  >= 1.30) in CEL: objects labelled `app.kubernetes.io/managed-by: berth` are created,
  changed and deleted by Berth alone; Ingress hosts and cert-manager Certificate names stay
  inside the tenant's allowed domains (per tenant: a binding selecting the tenant's
  namespaces by their `berth.dev/tenant` label, with a ConfigMap of domains in Berth's
  namespace as its parameter).
- **Bootstrap.** `bootstrap_objects`: both of the above, applied once per cluster (and again
  after onboarding a tenant or changing its domains) by `provisioning.bootstrap`.
- **Validate before create.** `validate_plan`: every object of a plan against its schema and
  against Berth's own rules, before the first API call.
- **Offline evaluators** for tests and for reasoning: `appproject_permits` (Argo CD's
  project rules) and `allowed_by_admission` (the policies above evaluated with cel-python
  over an admission request).
"""

from __future__ import annotations

import fnmatch
import functools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import celpy
from celpy import CELEvalError

from provisioning.plan import (
    GITOPS_SERVICE_ACCOUNT,
    GUARDRAIL_KINDS,
    LABEL_TENANT,
    MANAGED_BY,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
    ClusterSpec,
    Plan,
    PlanInput,
    TenantSpec,
    ref_of,
)
from provisioning.rbac import RBAC_GROUP, label_selector_matches, resource_of

logger = logging.getLogger(__name__)

# --- roles -------------------------------------------------------------------------------

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
BERTH_ROLES = (TENANT_EDIT_ROLE, TENANT_VIEW_ROLE)
ADMISSION_GROUP = "admissionregistration.k8s.io"
PART_OF = "app.kubernetes.io/part-of"


def _rule(groups: Iterable[str], resources: Iterable[str], verbs: Iterable[str]) -> dict:
    return {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}


# Kubernetes 1.30 `view` (system:aggregate-to-view), without the dead `extensions` group and
# the `bindings` pseudo-resource; plus reading the namespace's Roles and RoleBindings (who
# may do what here is no secret to the team) and cert-manager's objects.
VIEW_RULES: tuple[dict, ...] = (
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
EDIT_RULES: tuple[dict, ...] = (
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

ROLE_RULES: dict[str, tuple[dict, ...]] = {
    TENANT_EDIT_ROLE: EDIT_RULES,
    TENANT_VIEW_ROLE: VIEW_RULES,
}

# What each of Berth's roles means, in the words the tenant page uses
# (tests/test_guardrails.py checks each claim against the RBAC evaluator).
ROLE_SUMMARIES: dict[str, str] = {
    TENANT_EDIT_ROLE: (
        "deploy and change workloads, Services, Ingresses, ConfigMaps and Secrets, exec into "
        "pods and add their own NetworkPolicies; read quota, limits and RBAC but not change "
        "them, nor anything Berth created"
    ),
    TENANT_VIEW_ROLE: "read everything except Secrets; change nothing",
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
        for name, rules in ROLE_RULES.items()
    ]


# --- admission ---------------------------------------------------------------------------

PROTECT_POLICY = "berth-protect-managed"
INGRESS_DOMAINS_POLICY = "berth-ingress-domains"
CERTIFICATE_DOMAINS_POLICY = "berth-certificate-domains"
DOMAINS_PARAM_PREFIX = "berth-domains-tenant-"
UNLISTED = "unlisted-tenants"
BERTH_SERVICE_ACCOUNT = "berth"

# Besides Berth, who must be able to change or delete Berth's objects: the controllers that
# empty a namespace Berth deletes and collect what it owned (as ServiceAccounts, and as
# kube-controller-manager itself when it runs without --use-service-account-credentials).
CONTROLLER_USERS = (
    "system:serviceaccount:kube-system:namespace-controller",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    "system:kube-controller-manager",
)
# Kargo's management controller adopts the project namespace Berth labels for it (patches
# it) and deletes the Project when that namespace goes.
KARGO_CONTROLLER = "system:serviceaccount:kargo:kargo-management-controller"

# Every kind Berth labels as its own, by API group and version: the protect policy's scope.
# (tests check it covers every kind a plan or the bootstrap applies.)
PROTECTED_RESOURCES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "",
        "v1",
        ("configmaps", "limitranges", "namespaces", "resourcequotas", "serviceaccounts"),
    ),
    ("networking.k8s.io", "v1", ("networkpolicies",)),
    (RBAC_GROUP, "v1", ("clusterroles", "rolebindings")),
    ("argoproj.io", "v1alpha1", ("appprojects",)),
    ("kargo.akuity.io", "v1alpha1", ("projectconfigs", "projects")),
)


def berth_username(namespace: str, service_account: str = BERTH_SERVICE_ACCOUNT) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


def _cel_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _within_domains(host: str) -> str:
    """CEL: `host` is one of the param's domains or a name under one (wildcards included:
    `*.shop.example.com` ends with `.example.com`). Standard CEL only (has, exists on a
    map's keys, endsWith), so cel-python and the API server agree."""
    return f"(has(params.data) && params.data.exists(d, {host} == d || {host}.endsWith('.' + d)))"


def _labels(**extra: str) -> dict[str, str]:
    return {MANAGED_BY: "berth", PART_OF: "berth", **extra}


def protect_policy(exempt_users: Iterable[str]) -> dict[str, Any]:
    users = ", ".join(_cel_string(user) for user in exempt_users)
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": PROTECT_POLICY, "labels": _labels()},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                # Old or new object labelled: also catches removing the label, and a team
                # labelling its own object as Berth's.
                "objectSelector": {"matchLabels": {MANAGED_BY: "berth"}},
                "resourceRules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": [version],
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "resources": list(resources),
                    }
                    for group, version, resources in PROTECTED_RESOURCES
                ],
            },
            "validations": [
                {
                    "expression": f"request.userInfo.username in [{users}]",
                    "message": (
                        "This object is Berth's (app.kubernetes.io/managed-by: berth): only "
                        "Berth creates, changes or deletes it. Ask for the change in Berth."
                    ),
                    "reason": "Forbidden",
                }
            ],
        },
    }


INGRESS_VALIDATIONS = (
    {
        "expression": "!has(object.spec.rules) || object.spec.rules.all(r, has(r.host) && "
        + _within_domains("r.host")
        + ")",
        "message": "Every Ingress rule must name a host in the tenant's allowed domains "
        "(a rule without a host would answer for every name).",
        "reason": "Forbidden",
    },
    {
        "expression": "!has(object.spec.tls) || object.spec.tls.all(t, !has(t.hosts) || "
        "t.hosts.all(h, " + _within_domains("h") + "))",
        "message": "Every TLS host of an Ingress must be in the tenant's allowed domains.",
        "reason": "Forbidden",
    },
    {
        "expression": "!has(object.spec.defaultBackend) || "
        "(has(object.spec.rules) && size(object.spec.rules) > 0)",
        "message": "An Ingress with only a default backend would catch every host name on "
        "the shared ingress controller; name hosts in rules.",
        "reason": "Forbidden",
    },
)

CERTIFICATE_VALIDATIONS = (
    {
        "expression": "!has(object.spec.dnsNames) || object.spec.dnsNames.all(n, "
        + _within_domains("n")
        + ")",
        "message": "Every dnsName of a Certificate must be in the tenant's allowed domains.",
        "reason": "Forbidden",
    },
    {
        "expression": "!has(object.spec.commonName) || "
        + _within_domains("object.spec.commonName"),
        "message": "A Certificate's commonName must be in the tenant's allowed domains.",
        "reason": "Forbidden",
    },
)


def _domains_policy(name: str, group: str, resource: str, validations: Iterable[dict]) -> dict:
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": _labels()},
        "spec": {
            "failurePolicy": "Fail",
            # The domains: a ConfigMap in Berth's namespace, one per tenant, whose data keys
            # are the domains (values are ignored), named by each tenant's binding.
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [resource],
                    }
                ]
            },
            "validations": [dict(v) for v in validations],
        },
    }


def admission_policies(exempt_users: Iterable[str]) -> list[dict[str, Any]]:
    return [
        protect_policy(exempt_users),
        _domains_policy(
            INGRESS_DOMAINS_POLICY, "networking.k8s.io", "ingresses", INGRESS_VALIDATIONS
        ),
        _domains_policy(
            CERTIFICATE_DOMAINS_POLICY, "cert-manager.io", "certificates", CERTIFICATE_VALIDATIONS
        ),
    ]


def domains_param(tenant: str, domains: Iterable[str], berth_namespace: str) -> dict[str, Any]:
    """The tenant's allowed domains as a ConfigMap: one data key per domain."""
    config_map: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{DOMAINS_PARAM_PREFIX}{tenant}",
            "namespace": berth_namespace,
            "labels": _labels(**({LABEL_TENANT: tenant} if tenant != UNLISTED else {})),
        },
    }
    data = {domain.strip().lower().rstrip("."): "allowed" for domain in domains if domain.strip()}
    if data:
        config_map["data"] = dict(sorted(data.items()))
    return config_map


def _binding(
    name: str, policy: str, *, namespace_selector: dict | None, param: str = "", param_ns: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {"policyName": policy, "validationActions": ["Deny"]}
    if param:
        spec["paramRef"] = {
            "name": param,
            "namespace": param_ns,
            # A tenant whose domains are missing gets no host at all, never any host.
            "parameterNotFoundAction": "Deny",
        }
    if namespace_selector is not None:
        spec["matchResources"] = {"namespaceSelector": namespace_selector}
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": _labels()},
        "spec": spec,
    }


def domain_bindings(tenant: str, berth_namespace: str, selector: dict) -> list[dict[str, Any]]:
    param = f"{DOMAINS_PARAM_PREFIX}{tenant}"
    return [
        _binding(
            f"{policy}-tenant-{tenant}",
            policy,
            namespace_selector=selector,
            param=param,
            param_ns=berth_namespace,
        )
        for policy in (INGRESS_DOMAINS_POLICY, CERTIFICATE_DOMAINS_POLICY)
    ]


def bootstrap_objects(
    cluster: ClusterSpec,
    tenants: Iterable[TenantSpec],
    *,
    berth_namespace: str,
    berth_user: str = "",
    extra_exempt_users: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The cluster-wide objects Berth installs once per cluster, in apply order: its tenant
    ClusterRoles, Berth's namespace with each tenant's domains, the admission policies and
    their bindings. Idempotent: apply again after onboarding a tenant or changing domains."""
    tenants = sorted(tenants, key=lambda t: t.slug)
    exempt = [berth_user or berth_username(berth_namespace), *CONTROLLER_USERS]
    if cluster.has_kargo:
        exempt.append(KARGO_CONTROLLER)
    exempt += [user for user in extra_exempt_users if user not in exempt]

    objects: list[dict[str, Any]] = cluster_roles()
    objects.append(
        # Not labelled managed-by: it may be the namespace Berth itself runs in.
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": berth_namespace, "labels": {PART_OF: "berth"}},
        }
    )
    objects += [domains_param(t.slug, t.allowed_domains, berth_namespace) for t in tenants]
    # A tenant onboarded after the last install has no binding of its own yet: its
    # namespaces get an empty domain list (every host refused) until guardrails are
    # installed again, never no check at all.
    objects.append(domains_param(UNLISTED, (), berth_namespace))
    objects += admission_policies(exempt)
    objects.append(_binding(PROTECT_POLICY, PROTECT_POLICY, namespace_selector=None))
    for tenant in tenants:
        objects += domain_bindings(
            tenant.slug, berth_namespace, {"matchLabels": {LABEL_TENANT: tenant.slug}}
        )
    unlisted_selector: dict[str, Any] = {
        "matchExpressions": [{"key": LABEL_TENANT, "operator": "Exists"}]
    }
    if tenants:
        unlisted_selector["matchExpressions"].append(
            {"key": LABEL_TENANT, "operator": "NotIn", "values": [t.slug for t in tenants]}
        )
    objects += domain_bindings(UNLISTED, berth_namespace, unlisted_selector)
    return objects


# --- validate before create --------------------------------------------------------------

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


def validate_plan(
    plan: Plan, inputs: PlanInput, *, crd_dir: str | None = None
) -> dict[str, list[str]]:
    """Every problem of a plan, by object ("Kind/namespace/name"), before anything is
    applied: its schema (built-in kinds always; custom kinds when the CRDs are on this
    machine, else skipped and logged) and Berth's own guardrail rules. Empty: go ahead."""
    from provisioning.schema import SchemaUnavailable, validate_object

    problems: dict[str, list[str]] = {}
    for index, obj in enumerate(plan.apply):
        key = _key(obj, index)
        try:
            errors = [f"schema: {error}" for error in validate_object(obj, crd_dir=crd_dir)]
        except SchemaUnavailable as exc:
            logger.info("schema check of %s skipped: %s", key, exc)
            errors = []
        errors += guardrail_problems(obj, inputs)
        if errors:
            problems.setdefault(key, []).extend(errors)
    prefix = f"{inputs.tenant.slug}-"
    for ref in plan.delete:
        if ref.kind != "Namespace" or not ref.name.startswith(prefix):
            problems.setdefault(str(ref), []).append(
                f"a tenant's plan deletes only namespaces named {prefix}*"
            )
    return problems


def _key(obj: Any, index: int) -> str:
    try:
        return str(ref_of(obj))
    except (KeyError, TypeError, AttributeError):
        return f"object #{index}"


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
    return problems


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


@dataclass(frozen=True)
class AdmissionResult:
    allowed: bool
    reasons: tuple[str, ...] = ()


def admission_request(
    operation: str,
    *,
    user: str,
    groups: Iterable[str] = (),
    obj: Mapping[str, Any] | None = None,
    old: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An admission.k8s.io/v1 AdmissionRequest as the API server builds it (the `request`
    CEL variable), with `object` and `oldObject` alongside: CREATE has only obj, DELETE
    only old, UPDATE both."""
    source = obj if obj is not None else old
    if source is None:
        raise ValueError("an admission request needs an object or an old object")
    group, resource = resource_of(source["apiVersion"], source["kind"])
    version = source["apiVersion"].rpartition("/")[2]
    meta = source["metadata"]
    gvk = {"group": group, "version": version, "kind": source["kind"]}
    gvr = {"group": group, "version": version, "resource": resource}
    return {
        "uid": "00000000-0000-0000-0000-000000000000",
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "operation": operation,
        "userInfo": {"username": user, "groups": list(groups)},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }


_CEL = celpy.Environment()


@functools.lru_cache(maxsize=256)
def _program(expression: str):  # noqa: ANN202 - a celpy Runner
    return _CEL.program(_CEL.compile(expression))


def evaluate_cel(expression: str, activation: Mapping[str, Any]) -> Any:
    """Evaluate one expression with cel-python; a CELEvalError is returned, not raised."""
    try:
        return _program(expression).evaluate(activation)
    except CELEvalError as error:
        return error


def _holds(result: Any) -> bool:
    return isinstance(result, celpy.celtypes.BoolType) and bool(result)


def _rules_match(rules: Iterable[Mapping[str, Any]], request: Mapping[str, Any]) -> bool:
    resource = request["resource"]["resource"]
    group, version = request["resource"]["group"], request["resource"]["version"]
    for rule in rules:
        if not {"*", request["operation"]} & set(rule.get("operations") or []):
            continue
        if not {"*", group} & set(rule.get("apiGroups") or []):
            continue
        if not {"*", version} & set(rule.get("apiVersions") or []):
            continue
        # "*" is every resource but no subresource; the requests here carry none.
        if {"*", resource} & set(rule.get("resources") or []):
            return True
    return False


def _resources_match(
    match: Mapping[str, Any] | None,
    request: Mapping[str, Any],
    namespaces: Mapping[str, Mapping[str, str]],
) -> bool:
    """matchConstraints / matchResources: rules, namespaceSelector, objectSelector."""
    if not match:
        return True
    if "resourceRules" in match and not _rules_match(match["resourceRules"], request):
        return False
    if _rules_match(match.get("excludeResourceRules") or [], request):
        return False
    objects = [o for o in (request["object"], request["oldObject"]) if o is not None]
    if "namespaceSelector" in match:
        if request["resource"]["resource"] == "namespaces":
            # A Namespace is matched by its own labels.
            if not any(
                label_selector_matches(
                    match["namespaceSelector"], o["metadata"].get("labels") or {}
                )
                for o in objects
            ):
                return False
        elif request["namespace"]:
            labels = namespaces.get(request["namespace"], {})
            if not label_selector_matches(match["namespaceSelector"], labels):
                return False
        # Other cluster-scoped objects are never skipped by a namespaceSelector.
    return "objectSelector" not in match or any(
        label_selector_matches(match["objectSelector"], o["metadata"].get("labels") or {})
        for o in objects
    )


def allowed_by_admission(
    request: Mapping[str, Any],
    objects: Iterable[Mapping[str, Any]],
    *,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> AdmissionResult:
    """Would the ValidatingAdmissionPolicies among `objects` (with their bindings and the
    ConfigMaps their paramRefs name) admit `request`? `namespaces` gives each namespace's
    labels, for namespaceSelectors. Follows the API server: a binding applies when both
    the policy's matchConstraints and its own matchResources match; matchConditions must
    all hold; a missing param with parameterNotFoundAction Deny refuses; a validation that
    is false or fails to evaluate (failurePolicy Fail) refuses when the binding's
    validationActions include Deny."""
    objects = list(objects)
    namespaces = namespaces or {}
    policies = {
        o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"
    }
    params = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "ConfigMap"
    }
    namespace_object = (
        {"metadata": {"name": request["namespace"], "labels": namespaces[request["namespace"]]}}
        if request["namespace"] in namespaces
        else None
    )
    reasons: list[str] = []
    for binding in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"):
        spec = binding["spec"]
        policy = policies.get(spec["policyName"])
        if policy is None or "Deny" not in spec.get("validationActions", []):
            continue
        if not _resources_match(policy["spec"].get("matchConstraints"), request, namespaces):
            continue
        if not _resources_match(spec.get("matchResources"), request, namespaces):
            continue
        name = f"{spec['policyName']} (binding {binding['metadata']['name']})"
        variables: dict[str, Any] = {
            "object": request["object"],
            "oldObject": request["oldObject"],
            "request": {k: v for k, v in request.items() if k not in ("object", "oldObject")},
            "namespaceObject": namespace_object,
            "params": None,
        }
        if policy["spec"].get("paramKind"):
            ref = spec.get("paramRef") or {}
            param = params.get((ref.get("namespace") or request["namespace"], ref.get("name")))
            if param is None:
                if ref.get("parameterNotFoundAction") == "Deny":
                    reasons.append(f"{name}: its parameter {ref.get('name')} does not exist")
                continue
            variables["params"] = param
        activation = celpy.json_to_cel(variables)
        conditions = policy["spec"].get("matchConditions") or []
        if not all(_holds(evaluate_cel(c["expression"], activation)) for c in conditions):
            continue
        for variable in policy["spec"].get("variables") or []:
            value = evaluate_cel(variable["expression"], activation)
            activation.setdefault(celpy.celtypes.StringType("variables"), celpy.celtypes.MapType())[
                celpy.celtypes.StringType(variable["name"])
            ] = value
        for validation in policy["spec"].get("validations") or []:
            result = evaluate_cel(validation["expression"], activation)
            if isinstance(result, CELEvalError):
                reasons.append(f"{name}: expression failed ({result.args[0]}), failurePolicy Fail")
            elif not _holds(result):
                reasons.append(f"{name}: {validation.get('message', validation['expression'])}")
    return AdmissionResult(allowed=not reasons, reasons=tuple(reasons))
