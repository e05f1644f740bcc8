"""The plan: the exact cluster objects a request causes, rendered as plain data.

Pure: inputs are frozen dataclasses (built from the database by `provisioning.inputs`),
output is a `Plan` of dicts in apply order plus references to delete. No I/O, no string
templates. Every object carries Berth's ownership labels so the engine can find, diff and
garbage-collect what it made. The plan's digest binds an approval to exactly this content.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from tenants.naming import namespace_name

MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_TENANT = "berth.dev/tenant"
LABEL_TIER = "berth.dev/tier"
LABEL_REQUEST = "berth.dev/request"
LABEL_PROJECT = "berth.dev/project"
GITOPS_SERVICE_ACCOUNT = "berth-gitops"
# The ClusterRoles Berth ships (provisioning.guardrails defines them; a cluster gets them from
# "Install guardrails"): Kubernetes' edit/view minus everything that would widen a tenant's
# own rights. The GitOps ServiceAccount of every namespace is bound to the edit one.
TENANT_EDIT_ROLE = "berth-tenant-edit"
TENANT_VIEW_ROLE = "berth-tenant-view"
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
ROLES = ("owner", "member", "viewer")

# Kinds a tenant's GitOps must never manage: they grant or bound permissions.
GUARDRAIL_KINDS = (
    ("", "ResourceQuota"),
    ("", "LimitRange"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("argoproj.io", "AppProject"),
    ("kargo.akuity.io", "Project"),
    ("kargo.akuity.io", "ProjectConfig"),
)
# Argo CD project roles: what each tenant role may do with the tenant's Applications.
ARGOCD_ACTIONS = {
    "owner": ("get", "create", "update", "delete", "sync", "override", "action/*"),
    "member": ("get", "sync", "action/*"),
    "viewer": ("get",),
}
# Apply order: what others live in or refer to comes first.
KIND_ORDER = {
    "Namespace": 0,
    "ServiceAccount": 1,
    "ResourceQuota": 2,
    "LimitRange": 3,
    "NetworkPolicy": 4,
    "RoleBinding": 5,
    "AppProject": 6,
    "Project": 7,
    "ProjectConfig": 8,
}


@dataclass(frozen=True)
class TierSpec:
    slug: str
    pod_security_level: str
    network_preset: str
    container_default_cpu_millis: int
    container_default_memory_mib: int
    container_request_cpu_millis: int
    container_request_memory_mib: int
    cluster_roles: dict[str, str]  # tenant role → ClusterRole
    # Promotion order of the GitOps definitions (provisioning.gitops_plan); not rendered here.
    position: int = 0
    is_ephemeral: bool = False


@dataclass(frozen=True)
class TenantSpec:
    slug: str
    name: str
    groups: dict[str, tuple[str, ...]]  # tenant role → OIDC groups
    repo_url: str
    # Where provisioning.gitops_plan writes in the repository; not rendered here.
    repo_branch: str = "main"
    repo_path: str = ""
    # DNS domains the tenant's Ingresses and Certificates may use (provisioning.guardrails'
    # admission policy); not rendered into a plan.
    allowed_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    argocd_namespace: str
    has_kargo: bool
    ingress_namespace: str
    # Argo CD >= 2.13 with `application.sync.impersonation.enabled`: syncs run as the
    # destination namespace's GitOps ServiceAccount (AppProject destinationServiceAccounts).
    argocd_impersonation: bool = False


@dataclass(frozen=True)
class NamespaceSpec:
    name: str
    tier: TierSpec
    cpu_millis: int
    memory_mib: int
    storage_gib: int
    project: str = ""
    # An ephemeral environment's slug (review-42): its GitOps files are its own, apart from
    # the tier's. Several may share one namespace. Only provisioning.gitops_plan reads it.
    environment: str = ""


@dataclass(frozen=True)
class PlanInput:
    request_id: int
    tenant: TenantSpec
    cluster: ClusterSpec
    engine: str  # argocd | argocd_kargo | flux
    namespaces: tuple[NamespaceSpec, ...] = ()
    project: str = ""
    remove_namespaces: tuple[str, ...] = ()
    # The application a GitOps write is about (the project, or a namespace request's app);
    # only provisioning.gitops_plan reads it.
    app: str = ""


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}"


@dataclass(frozen=True)
class Plan:
    apply: tuple[dict[str, Any], ...] = ()
    delete: tuple[ObjectRef, ...] = field(default_factory=tuple)

    @property
    def digest(self) -> str:
        canonical = json.dumps(
            {"apply": list(self.apply), "delete": [vars(ref) for ref in self.delete]},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    def to_yaml(self) -> str:
        documents = list(self.apply)
        documents += [
            {
                "delete": {
                    "apiVersion": r.api_version,
                    "kind": r.kind,
                    "name": r.name,
                    **({"namespace": r.namespace} if r.namespace else {}),
                }
            }
            for r in self.delete
        ]
        return yaml.safe_dump_all(documents, sort_keys=True, default_flow_style=False)


def ref_of(obj: dict[str, Any]) -> ObjectRef:
    meta = obj["metadata"]
    return ObjectRef(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace", ""))


def uses_argocd(engine: str) -> bool:
    return engine in ("argocd", "argocd_kargo")


def argocd_apps_namespace(tenant: str) -> str:
    """Where the tenant's Argo CD Applications live (apps-in-any-namespace)."""
    return f"{tenant}-apps"


def kargo_project_name(tenant: str, project: str) -> str:
    """Kargo names its project namespace after the project: `<tenant>-<app>-kargo`."""
    return namespace_name(tenant, project, "kargo")


# --- rendering -----------------------------------------------------------------------


def _labels(inputs: PlanInput, **extra: str) -> dict[str, str]:
    labels = {
        MANAGED_BY: "berth",
        LABEL_TENANT: inputs.tenant.slug,
        LABEL_REQUEST: str(inputs.request_id),
    }
    labels.update({key: value for key, value in extra.items() if value})
    return labels


def _meta(name: str, labels: dict[str, str], namespace: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _pod_security(level: str) -> dict[str, str]:
    return {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/audit": level,
        "pod-security.kubernetes.io/warn": level,
    }


def _cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _memory(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib and mib % 1024 == 0 else f"{mib}Mi"


def _network_policies(ns: NamespaceSpec, cluster: ClusterSpec, labels: dict) -> list[dict]:
    def policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": _meta(name, labels, ns.name),
            "spec": {"podSelector": {}, **spec},
        }

    same_namespace = [{"podSelector": {}}]
    policies = [
        policy("berth-default-deny", {"policyTypes": ["Ingress", "Egress"]}),
        policy(
            "berth-allow-same-namespace",
            {
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": same_namespace}],
                "egress": [{"to": same_namespace}],
            },
        ),
        policy(
            "berth-allow-dns",
            {
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                },
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    }
                ],
            },
        ),
    ]
    if ns.tier.network_preset == "ingress":
        policies.append(
            policy(
                "berth-allow-ingress-controller",
                {
                    "policyTypes": ["Ingress"],
                    "ingress": [
                        {
                            "from": [
                                {
                                    "namespaceSelector": {
                                        "matchLabels": {
                                            "kubernetes.io/metadata.name": cluster.ingress_namespace
                                        }
                                    }
                                }
                            ]
                        }
                    ],
                },
            )
        )
    return policies


def _role_binding(
    name: str, namespace: str, cluster_role: str, subjects: list[dict], labels: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _meta(name, labels, namespace),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": cluster_role,
        },
        "subjects": subjects,
    }


def namespace_objects(inputs: PlanInput, ns: NamespaceSpec) -> list[dict[str, Any]]:
    """Everything that fences one namespace in: PSS labels, quota, limits, policies, RBAC."""
    labels = _labels(inputs, **{LABEL_TIER: ns.tier.slug, LABEL_PROJECT: ns.project})
    namespace_labels = {**labels, **_pod_security(ns.tier.pod_security_level)}
    tier = ns.tier
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(ns.name, namespace_labels)},
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": _meta("berth-quota", labels, ns.name),
            "spec": {
                "hard": {
                    "requests.cpu": _cpu(ns.cpu_millis),
                    "limits.cpu": _cpu(ns.cpu_millis),
                    "requests.memory": _memory(ns.memory_mib),
                    "limits.memory": _memory(ns.memory_mib),
                    "requests.storage": f"{ns.storage_gib}Gi",
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": _meta("berth-limits", labels, ns.name),
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {
                            "cpu": _cpu(tier.container_default_cpu_millis),
                            "memory": _memory(tier.container_default_memory_mib),
                        },
                        "defaultRequest": {
                            "cpu": _cpu(tier.container_request_cpu_millis),
                            "memory": _memory(tier.container_request_memory_mib),
                        },
                    }
                ]
            },
        },
        *_network_policies(ns, inputs.cluster, labels),
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(GITOPS_SERVICE_ACCOUNT, labels, ns.name),
        },
        _role_binding(
            GITOPS_SERVICE_ACCOUNT,
            ns.name,
            TENANT_EDIT_ROLE,
            [{"kind": "ServiceAccount", "name": GITOPS_SERVICE_ACCOUNT, "namespace": ns.name}],
            labels,
        ),
    ]
    for role in ROLES:
        groups = inputs.tenant.groups.get(role, ())
        if groups:
            objects.append(
                _role_binding(
                    f"berth-{role}s",
                    ns.name,
                    tier.cluster_roles[role],
                    [
                        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
                        for group in groups
                    ],
                    labels,
                )
            )
    return objects


def argocd_objects(inputs: PlanInput) -> list[dict[str, Any]]:
    """The tenant's AppProject: only its own namespaces, its own repo, nothing cluster-wide."""
    tenant = inputs.tenant
    labels = _labels(inputs)
    apps_namespace = argocd_apps_namespace(tenant.slug)
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
            "metadata": _meta(apps_namespace, {**labels, **_pod_security("restricted")}),
        },
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": _meta(tenant.slug, labels, inputs.cluster.argocd_namespace),
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
    name = kargo_project_name(inputs.tenant.slug, inputs.project)
    labels = _labels(inputs, **{LABEL_PROJECT: inputs.project})
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": _meta(
                name,
                {**labels, **_pod_security("restricted"), "kargo.akuity.io/project": "true"},
            ),
        },
        {
            "apiVersion": "kargo.akuity.io/v1alpha1",
            "kind": "Project",
            "metadata": _meta(name, labels),
        },
        {
            "apiVersion": "kargo.akuity.io/v1alpha1",
            "kind": "ProjectConfig",
            "metadata": _meta(name, labels, name),
            "spec": {
                "promotionPolicies": [
                    {"stageSelector": {"name": "dev"}, "autoPromotionEnabled": True}
                ]
            },
        },
    ]


def _sort_key(obj: dict[str, Any]) -> tuple:
    meta = obj["metadata"]
    return (KIND_ORDER.get(obj["kind"], 99), meta.get("namespace", ""), meta["name"])


def render(inputs: PlanInput) -> Plan:
    objects: list[dict[str, Any]] = []
    for ns in inputs.namespaces:
        objects += namespace_objects(inputs, ns)
    if uses_argocd(inputs.engine) and inputs.cluster.argocd_namespace:
        objects += argocd_objects(inputs)
    if inputs.engine == "argocd_kargo" and inputs.project and inputs.cluster.has_kargo:
        objects += kargo_objects(inputs)
    deletions = tuple(ObjectRef("v1", "Namespace", name) for name in inputs.remove_namespaces)
    return Plan(apply=tuple(sorted(objects, key=_sort_key)), delete=deletions)
