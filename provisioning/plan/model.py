"""What a plan is made of: the labels Berth owns objects by, the frozen inputs (built from
the database by `provisioning.inputs`), object references, and the `Plan` whose digest an
approval binds to.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from provisioning.plan.shown import bound_object, redact_secret
from tenants.naming import argocd_apps_namespace, gitops_namespace, kargo_namespace

MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_TENANT = "berth.dev/tenant"
LABEL_TIER = "berth.dev/tier"
LABEL_REQUEST = "berth.dev/request"
LABEL_PROJECT = "berth.dev/project"
# An ephemeral environment's slug, on its Kargo Stage (auto-promoted by the ProjectConfig).
LABEL_ENVIRONMENT = "berth.dev/environment"
# An access grant's binding (provisioning.plan.access): which grant, and until when.
LABEL_ACCESS_GRANT = "berth.dev/access-grant"
ANNOTATION_ACCESS_EXPIRES = "berth.dev/access-expires-at"
GITOPS_SERVICE_ACCOUNT = "berth-gitops"
# The ClusterRoles Berth ships (provisioning.guardrails defines them; a cluster gets them from
# "Install guardrails"): Kubernetes' edit/view minus everything that would widen a tenant's
# own rights. The GitOps ServiceAccount of every namespace is bound to the edit one.
TENANT_EDIT_ROLE = "berth-tenant-edit"
TENANT_VIEW_ROLE = "berth-tenant-view"
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
ROLES = ("owner", "member", "viewer")

# The tenant's own objects on a cluster (provisioning.plan.tenant) and a project's Kargo
# side (provisioning.plan.projects), by name.
ROOT_NAME = "berth-root"  # the Argo CD root Application, the Flux root Kustomization
REPO_CREDENTIALS = "berth-repo-credentials"  # the repository Secret Kargo and Flux read
RECONCILER_SERVICE_ACCOUNT = "berth-reconciler"  # Flux applies the tenant's files as it
# ClusterRoles Berth ships beside its tenant roles (provisioning.guardrails.roles), bound
# by plans in the tenant's GitOps namespaces.
FLUX_RECONCILER_ROLE = "berth-flux-reconciler"  # Kustomizations in <tenant>-gitops
ARGOCD_APPLICATIONS_ROLE = "berth-argocd-applications"  # Applications in <tenant>-apps
# Kargo's own (its chart's): reading a project, which people's Kargo roles get.
KARGO_VIEWER_ROLE = "kargo-viewer"
# Parameters of Berth's admission policies, one ConfigMap per tenant namespace
# (provisioning.guardrails.admission reads them there).
DOMAINS_CONFIG = "berth-allowed-domains"
GITOPS_SOURCES_CONFIG = "berth-gitops-sources"
ARGOCD = "argocd"
FLUX = "flux"

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
    "ConfigMap": 5,
    "Secret": 5,
    "Role": 5,
    "RoleBinding": 6,
    "AppProject": 7,
    "Project": 8,
    "ProjectConfig": 9,
    "GitRepository": 10,
    "Kustomization": 11,
    "Application": 11,
    "SleepInfo": 12,
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
class RepoCredential:
    """How the tenant's GitOps engines read its repository: an HTTPS token (with the user
    name to send it as) or an SSH deploy key (with the host's key, which Flux checks).
    Plans show it redacted, with a digest (`Plan.redacted`)."""

    transport: str  # https | ssh
    username: str = ""
    password: str = field(default="", repr=False)
    ssh_private_key: str = field(default="", repr=False)
    known_hosts: str = ""


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
    # The tenant's Argo CD applications and Flux GitOps namespaces as the registry holds
    # them (their usual names when not given).
    apps_namespace: str = ""
    gitops_namespace: str = ""
    credential: RepoCredential | None = field(default=None, repr=False)
    # The tenant's namespaces on the plan's cluster as the records hold them (live, or
    # about to be made by an approved request; its projects' Kargo namespaces): its
    # AppProject's destinations name them, with the plan's own and without those it removes.
    namespaces: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.apps_namespace:
            object.__setattr__(self, "apps_namespace", argocd_apps_namespace(self.slug))
        if not self.gitops_namespace:
            object.__setattr__(self, "gitops_namespace", gitops_namespace(self.slug))


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    argocd_namespace: str
    has_kargo: bool
    ingress_namespace: str
    # Argo CD >= 2.13 with `application.sync.impersonation.enabled`: syncs run as the
    # destination namespace's GitOps ServiceAccount (AppProject destinationServiceAccounts).
    argocd_impersonation: bool = False
    # Berth writes tenants' repository Secrets into Argo CD's namespace (it may, there).
    argocd_repository_secrets: bool = True


@dataclass(frozen=True)
class GrantSpec:
    """One person's access grant on one namespace: the role it binds them to, by the user
    name the cluster gives their ID token, and until when ("" before it is approved)."""

    id: int
    request_id: int
    namespace: str
    role: str
    cluster_role: str
    subject: str
    minutes: int
    expires_at: str = ""
    # Every ClusterRole the namespace's tier offers to grants: the guardrails refuse others.
    offered: tuple[str, ...] = ()


@dataclass(frozen=True)
class SleepSpec:
    """A namespace's sleep schedule (provisioning.plan.sleep), who carries it out (kube-green
    where the cluster serves it, else Berth), and what Berth wants of it now."""

    weekdays: str  # kube-green's notation
    sleep_at: str  # HH:MM
    wake_at: str
    time_zone: str
    kube_green: bool
    asleep: bool  # the schedule and any wake on demand, at the moment the input was read
    next_change: str = ""  # ISO 8601: when that changes next


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
    # The cluster it is on, when it may differ from the plan's (the GitOps files of an
    # application list every environment; each cluster's index only its own).
    cluster: str = ""
    # Its project's engine, when a plan spans projects (a tenant's objects on a cluster).
    engine: str = ""
    # People's live access grants there: their bindings are part of what it should hold.
    grants: tuple[GrantSpec, ...] = ()
    # Its sleep schedule, when it has one (read from its live records, not its pinned tier).
    sleep: SleepSpec | None = None


@dataclass(frozen=True)
class KargoProject:
    """A project's Kargo side: its namespace (also the Kargo Project's name) and every tier
    it has on the cluster (its Stages, which the tenant's groups promote as each allows)."""

    name: str
    namespace: str
    tiers: tuple[TierSpec, ...] = ()


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
    # The engines (ARGOCD, FLUX) whose tenant-wide objects this plan applies on the cluster:
    # the AppProject and root Application, the Flux namespace and root, the repository
    # credentials. Empty: the plan holds none.
    tenant_engines: frozenset[str] = frozenset()
    # The Kargo projects whose Kargo side (Project, ProjectConfig, credential, people's
    # roles) this plan applies.
    kargo_projects: tuple[KargoProject, ...] = ()
    # Decommissioning a project or a tenant: these Kargo projects go, and (the tenant's
    # last project on the cluster) the tenant-wide objects of these engines.
    remove_kargo: tuple[KargoProject, ...] = ()
    remove_tenant_engines: frozenset[str] = frozenset()
    # The tenant's namespaces there change without its roots being applied (an ephemeral
    # namespace made, a namespace removed): the plan applies its AppProject alone, whose
    # destinations name them.
    refence: bool = False
    # Access grants applied on their own (an access request's plan): their bindings alone.
    grants: tuple[GrantSpec, ...] = ()

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

    def bound(self) -> tuple[dict[str, Any], ...]:
        """The objects as an approval binds to them (`shown.bound_object`): redacted,
        without a grant's end, an AppProject's destinations only for the namespaces this
        plan makes."""
        own = {obj["metadata"]["name"] for obj in self.apply if obj["kind"] == "Namespace"}
        return tuple(
            bound_object(obj, own_namespaces=own, unbound=ANNOTATION_ACCESS_EXPIRES)
            for obj in self.redacted()
        )

    def redacted(self) -> tuple[dict[str, Any], ...]:
        """The objects to apply as plans, previews, the API and logs show them: Secrets'
        values redacted."""
        return tuple(redact_secret(obj) for obj in self.apply)

    @functools.cached_property
    def digest(self) -> str:
        """What an approval binds to: every object, a Secret by its values' digests, an
        access grant by its duration rather than its end (`bound`). (A plan's objects are
        not changed once rendered: worked out once.)"""
        canonical = json.dumps(
            {"apply": list(self.bound()), "delete": [vars(ref) for ref in self.delete]},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    def to_yaml(self) -> str:
        documents = list(self.redacted())
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


def engine_family(engine: str) -> str:
    """Whose tenant-wide objects and root an engine uses: Argo CD's (with or without Kargo)
    or Flux's."""
    return FLUX if engine == FLUX else ARGOCD


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
