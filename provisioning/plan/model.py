"""What a plan is made of: the labels Berth owns objects by, the frozen inputs (built from
the database by `provisioning.inputs`), object references, and the `Plan` whose digest an
approval binds to.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from tenants.naming import argocd_apps_namespace, kargo_namespace

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
    # The tenant's Argo CD applications namespace as the registry holds it (its usual name
    # when not given).
    apps_namespace: str = ""

    def __post_init__(self) -> None:
        if not self.apps_namespace:
            object.__setattr__(self, "apps_namespace", argocd_apps_namespace(self.slug))


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
class ClaimSpec:
    """A namespace name's entry in the registry (tenants.models.NamespaceClaim)."""

    purpose: str  # tier | ephemeral | shared | kargo | argocd_apps | platform | berth
    tenant: str = ""  # its owner's slug; empty for the platform's and Berth's names
    app: str = ""


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
    # The project's Kargo namespace as the registry holds it (its usual name when not given).
    kargo_namespace: str = ""
    # What the registry says of every namespace name this plan touches (name -> claim), read
    # with the inputs; None when the inputs were made by hand (tests), which skips the check
    # that the plan touches only what is claimed for it (provisioning.guardrails.checks).
    claims: Mapping[str, ClaimSpec] | None = None

    def __post_init__(self) -> None:
        if not self.kargo_namespace and self.project:
            object.__setattr__(
                self, "kargo_namespace", kargo_namespace(self.tenant.slug, self.project)
            )


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


# --- rendering -----------------------------------------------------------------------


def owned_labels(inputs: PlanInput, **extra: str) -> dict[str, str]:
    labels = {
        MANAGED_BY: "berth",
        LABEL_TENANT: inputs.tenant.slug,
        LABEL_REQUEST: str(inputs.request_id),
    }
    labels.update({key: value for key, value in extra.items() if value})
    return labels


def metadata_of(name: str, labels: dict[str, str], namespace: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return meta
