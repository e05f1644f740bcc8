"""Where an application's files live in a tenant's repository and what its objects are
called: `apps/<app>/<environment>/`, overlays, the Kargo directory, repository URLs as
each engine wants them.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from provisioning.plan import NamespaceSpec, PlanInput, uses_argocd
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
        ("source.toolkit.fluxcd.io", "GitRepository"),
        ("kustomize.toolkit.fluxcd.io", "Kustomization"),
        ("kustomize.config.k8s.io", "Kustomization"),  # kustomize's own file, not an object
    }
)
ENGINE_LABELS = {"argocd": "Argo CD", "argocd_kargo": "Argo CD + Kargo", "flux": "Flux"}
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SCP_LIKE = re.compile(r"^(?P<user>[^@/\s:]+@)?(?P<host>[^@/\s:]+):(?!//)(?P<path>.+)$")


# --- naming and paths --------------------------------------------------------------------


def repo_root(path: str) -> str:
    """The tenant's base path in its repository, as a prefix ("" or "some/dir/")."""
    cleaned = path.strip().strip("/")
    if not cleaned:
        return ""
    parts = cleaned.split("/")
    if any(part in ("", ".", "..") or "\\" in part for part in parts):
        raise ValueError(
            f"GitOps base path {path!r} must be a relative path inside the repository "
            "(no '.', '..' or empty parts)"
        )
    return cleaned + "/"


def app_dir(inputs: PlanInput) -> str:
    """Everything Berth writes for one application lives under this directory."""
    if not _DNS_LABEL.fullmatch(inputs.app or ""):
        raise ValueError(f"application name {inputs.app!r} is not a DNS label")
    return f"{repo_root(inputs.tenant.repo_path)}apps/{inputs.app}/"


def scope(inputs: PlanInput) -> tuple[str, ...]:
    """The directories a write for these inputs may change (and reads before it does)."""
    return (app_dir(inputs),) if inputs.app else ()


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


def flux_name(inputs: PlanInput, ns: NamespaceSpec) -> str:
    return fit(f"{inputs.app}-{ns.environment}") if ns.environment else inputs.app


def stage_name(ns: NamespaceSpec) -> str:
    return fit(f"{ns.tier.slug}-{ns.environment}") if ns.environment else ns.tier.slug


def public_url(url: str) -> str:
    """A repository URL fit to write into a file: never a password or token in it."""
    parts = urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url  # scp-like git@host:path carries a user name, never a secret
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    # SSH names a login (git@); for HTTP(S) anything before @ is a credential.
    netloc = f"{user}@{host}" if parts.scheme == "ssh" and user else host
    return urlunsplit(parts._replace(netloc=netloc))


def flux_url(url: str) -> str:
    """Flux wants ssh:// where git accepts the scp-like form git@host:path."""
    url = public_url(url)
    match = _SCP_LIKE.match(url)
    if match and not urlsplit(url).scheme:
        return f"ssh://{match['user'] or ''}{match['host']}/{match['path']}"
    return url


def uses_kargo(inputs: PlanInput) -> bool:
    """Mirrors provisioning.plan.rendering.render: the Kargo project exists only for projects."""
    return inputs.engine == "argocd_kargo" and bool(inputs.project) and inputs.cluster.has_kargo


def writes_argocd(inputs: PlanInput) -> bool:
    return uses_argocd(inputs.engine) and bool(inputs.cluster.argocd_namespace)
