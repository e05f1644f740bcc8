"""Where an application's files live in a tenant's repository and what its objects are
called: `apps/<app>/<environment>/`, overlays, the Kargo directory, and the index of each
cluster and engine (`clusters/<cluster>/<argocd|flux>/kustomization.yaml`) that the
tenant's root of that engine on the cluster applies.
"""

from __future__ import annotations

import re

from provisioning.plan import NamespaceSpec, PlanInput, engine_family, uses_argocd
from provisioning.plan.repository import cluster_dir, repo_root
from tenants.naming import RESERVED_TIER_SLUGS, fit

MANAGED_MARK = "# Managed by Berth"
SKELETON_MARK = "# Created by Berth"
DIGEST_MARK = "# berth-skeleton-sha256: "
DEFAULT_IMAGE_REPOSITORY = "registry.example.com/{tenant}/{app}"
LABEL_PART_OF = "app.kubernetes.io/part-of"
# Directory names under apps/<app>/ that are not environments.
RESERVED_DIRS = RESERVED_TIER_SLUGS
# The only kinds a tenant's repository ever receives from Berth. Everything else, and in
# particular whatever grants or bounds permissions (Namespace, RBAC, quota, limits, network
# policy, ServiceAccounts, AppProject, Kargo Project / ProjectConfig), is applied by Berth.
TENANT_KINDS = frozenset(
    {
        ("argoproj.io", "Application"),
        ("kargo.akuity.io", "Warehouse"),
        ("kargo.akuity.io", "Stage"),
        ("kustomize.toolkit.fluxcd.io", "Kustomization"),
        ("kustomize.config.k8s.io", "Kustomization"),  # kustomize's own file, not an object
    }
)
ENGINE_LABELS = {"argocd": "Argo CD", "argocd_kargo": "Argo CD + Kargo", "flux": "Flux"}
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


# --- naming and paths --------------------------------------------------------------------


def app_dir(inputs: PlanInput) -> str:
    """Everything Berth writes for one application lives under this directory."""
    if not _DNS_LABEL.fullmatch(inputs.app or ""):
        raise ValueError(f"application name {inputs.app!r} is not a DNS label")
    return f"{repo_root(inputs.tenant.repo_path)}apps/{inputs.app}/"


def scope(inputs: PlanInput) -> tuple[str, ...]:
    """The directories a write for these inputs may change (and reads before it does)."""
    return (app_dir(inputs),) if inputs.app else ()


def index_path(inputs: PlanInput, family: str = "") -> str:
    """The cluster's index for one engine family (the request's by default): what the
    tenant's root of that engine on the cluster applies."""
    family = family or engine_family(inputs.engine)
    return f"{cluster_dir(inputs.tenant, inputs.cluster.name, family)}/kustomization.yaml"


def index_entry(inputs: PlanInput, directory: str) -> str:
    """A directory under the tenant's base path as the index names it (relative to it)."""
    base = repo_root(inputs.tenant.repo_path)
    if not directory.startswith(base):  # pragma: no cover - every directory Berth writes is
        raise ValueError(f"{directory} is outside the tenant's base path {base!r}")
    return "../../../" + directory[len(base) :].rstrip("/")


def environment_dir(ns: NamespaceSpec) -> str:
    """A tier's environment has the tier's directory; an ephemeral one a directory of its
    own inside it (`review/review-42`)."""
    return f"{ns.tier.slug}/{ns.environment}" if ns.environment else ns.tier.slug


def overlay_path(inputs: PlanInput, ns: NamespaceSpec) -> str:
    return f"{app_dir(inputs)}overlays/{environment_dir(ns)}"


def application_name(inputs: PlanInput, ns: NamespaceSpec) -> str:
    """Named after the namespace; an ephemeral environment's after itself, as several may
    share a namespace."""
    if ns.environment:
        return fit(f"{inputs.tenant.slug}-{inputs.app}-{ns.environment}")
    return ns.name


def stage_name(ns: NamespaceSpec) -> str:
    return fit(f"{ns.tier.slug}-{ns.environment}") if ns.environment else ns.tier.slug


def writes_argocd(inputs: PlanInput) -> bool:
    return uses_argocd(inputs.engine) and bool(inputs.cluster.argocd_namespace)
