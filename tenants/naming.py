"""Namespace names (docs/naming.md): `<tenant>-<app>-<tier>`, DNS-1123, at most 63 characters.

When the composed name is too long, only the app part is shortened, and a 12-character hash
(48 bits of SHA-256) of the full name is appended: `<tenant>-<app prefix>-<hash>-<tier>`.
The tenant prefix and the tier stay readable and the result is stable for the same input.
Making a name collide with someone else's costs about 2^48 hashes; and a collision, however
found, only refuses the second name: the namespace registry (tenants.services.names) holds
each name for one owner and says what holds it.

Names from an ephemeral environment's rule template (`fit`) keep their start instead: the
first 50 characters, a dash and the hash of the full name.

Names Berth uses beside the tiers': `<tenant>-<project>-kargo` for a project's Kargo
project (claimed with the project), `<tenant>-apps` for the tenant's Argo CD Applications
and `<tenant>-gitops` for its Flux root (claimed on every cluster the tenant may use);
`kargo` is therefore reserved as a tier slug and an environment slug. The tenant's two
have two words where a tier namespace has at least three, so they meet no tier's name.
"""

from __future__ import annotations

import hashlib
import re

# RFC 1123 labels (namespace names) are at most this long.
DNS_LABEL_MAX = 63
HASH_LENGTH = 12
# The last word of the names Berth gives a project's own namespaces: never a tier's or an
# environment's slug, so `<tenant>-<project>-<word>` means one thing only.
RESERVED_SUFFIXES = frozenset({"kargo"})
# What a tier's slug may not be: those words, and the directories of an application's
# GitOps files that are not environments (provisioning.gitops_plan.layout). Tier slugs have
# no dash either, so `<tenant>-<app>-<tier>` splits one way only.
RESERVED_TIER_SLUGS = frozenset({*RESERVED_SUFFIXES, "base", "overlays"})


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def namespace_name(tenant: str, app: str, tier: str) -> str:
    full = f"{tenant}-{app}-{tier}"
    if len(full) <= DNS_LABEL_MAX:
        return full
    # Room left for the app part once tenant, tier, the hash and three dashes are placed.
    room = DNS_LABEL_MAX - len(tenant) - len(tier) - HASH_LENGTH - 3
    app_prefix = app[: max(room, 0)].rstrip("-")
    parts = (
        [tenant, app_prefix, short_hash(full), tier]
        if app_prefix
        else [tenant, short_hash(full), tier]
    )
    return "-".join(parts)[:DNS_LABEL_MAX]


def fit(name: str) -> str:
    """A name composed from a template, cut to 63 characters when longer: its start (the
    tenant prefix) is kept, then a dash and the hash of the whole name."""
    if len(name) <= DNS_LABEL_MAX:
        return name
    keep = name[: DNS_LABEL_MAX - HASH_LENGTH - 1].rstrip("-")
    return f"{keep}-{short_hash(name)}"


def kargo_namespace(tenant: str, project: str) -> str:
    """Kargo names a project's namespace after the project: `<tenant>-<project>-kargo`."""
    return namespace_name(tenant, project, "kargo")


def argocd_apps_namespace(tenant: str) -> str:
    """Where the tenant's Argo CD Applications live (apps-in-any-namespace)."""
    return f"{tenant}-apps"


def gitops_namespace(tenant: str) -> str:
    """Where the tenant's Flux source and Kustomizations live, reconciled as the tenant."""
    return f"{tenant}-gitops"


def label_value(text: str) -> str:
    """Text (a branch, an environment name) made fit for a DNS label: lower case, every run
    of other characters turned into one dash, no dash at either end."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def kubernetes_id(tenant: str, project: str) -> str:
    """A project's name in Backstage (its Component) and the label its workloads carry for
    Backstage's Kubernetes plugin: one DNS label, never ending in a dash."""
    return f"{tenant}-{project}"[:DNS_LABEL_MAX].rstrip("-")


def was_truncated(tenant: str, app: str, tier: str) -> bool:
    return namespace_name(tenant, app, tier) != f"{tenant}-{app}-{tier}"


RESERVED_NAMES = frozenset({"default", "flux-system"})
RESERVED_PREFIXES = ("kube-", "argocd", "kargo")


def reserved_reason(name: str, *, berth_namespace: str) -> str | None:
    """Why a namespace name belongs to the cluster or its platform, or None if it is free."""
    if name in RESERVED_NAMES or name == berth_namespace:
        return f"{name} is reserved for the cluster's own components."
    for prefix in RESERVED_PREFIXES:
        if name.startswith(prefix):
            return f"{name} is reserved: names starting with {prefix!r} belong to the platform."
    return None


def outside_prefix_reason(name: str, *, tenant: str) -> str | None:
    if not name.startswith(f"{tenant}-"):
        return f"{name} is outside the tenant's prefix: its namespaces start with {tenant}-."
    return None


# Namespaces a cluster's platform lives in, whatever the cluster: claimed for the platform
# when a cluster is registered (tenants.services.names), with its own Argo CD and ingress
# namespaces and Berth's.
CLUSTER_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "flux-system",
    "kargo",
)
# Where a cluster's Argo CD and ingress controller live unless its settings say otherwise
# (tenants.models.Cluster's defaults): the platform's on every cluster registered as it comes.
DEFAULT_ARGOCD_NAMESPACE = "argocd"
DEFAULT_INGRESS_NAMESPACE = "ingress-nginx"


def platform_names(*, berth_namespace: str) -> tuple[str, ...]:
    """The names the platform or Berth holds on any cluster, known before one is registered:
    those a registration claims with the cluster's default settings."""
    return tuple(
        dict.fromkeys(
            (
                *CLUSTER_NAMESPACES,
                *sorted(RESERVED_NAMES),
                DEFAULT_ARGOCD_NAMESPACE,
                DEFAULT_INGRESS_NAMESPACE,
                berth_namespace,
            )
        )
    )


# Namespaces platforms commonly install into, whether or not a registered cluster holds
# them yet: a tenant slug equal to one, or whose prefix would cover one, is refused
# (docs/naming.md), so that installing the component later never lands inside a tenant.
WELL_KNOWN_PLATFORM_NAMESPACES = (
    "berth-system",
    "calico-system",
    "capsule-system",
    "cert-manager",
    "cilium",
    "crossplane-system",
    "external-dns",
    "external-secrets",
    "flux-system",
    "gatekeeper-system",
    "gitops-system",
    "ingress-nginx",
    "istio-ingress",
    "istio-system",
    "keda",
    "knative-serving",
    "kube-system",
    "kyverno",
    "linkerd",
    "logging",
    "longhorn-system",
    "metallb-system",
    "monitoring",
    "openshift-gitops",
    "opentelemetry-operator-system",
    "prometheus",
    "tekton-pipelines",
    "tigera-operator",
    "vault",
    "velero",
)


def reserved_coverage(slug: str, *, berth_namespace: str) -> str | None:
    """Why a tenant's prefix `<slug>-*` would reach names every cluster keeps for the
    platform or for Berth, or a namespace platforms commonly install into (or the slug is
    one), or None (docs/naming.md)."""
    prefix = f"{slug}-"
    for reserved in RESERVED_PREFIXES:
        if prefix.startswith(reserved):
            return (
                f"{slug!r} would give its namespaces names reserved for the platform: "
                f"names starting with {reserved!r} are the platform's."
            )
    if slug == "default":
        return (
            "'default' is the namespace Kubernetes uses when none is given: a tenant "
            "named so would read as the cluster's own."
        )
    for name in platform_names(berth_namespace=berth_namespace):
        if name.startswith(prefix):
            owner = (
                "Berth's own namespace"
                if name == berth_namespace
                else "reserved for the cluster's platform components"
            )
            return f"{slug!r} would cover {name}, which is {owner}."
    for name in WELL_KNOWN_PLATFORM_NAMESPACES:
        if slug == name or name.startswith(prefix):
            how = "is" if slug == name else "would cover"
            return (
                f"{slug!r} {how} {name}, a namespace platforms commonly install into: a "
                "tenant must not reach it when the platform adds it. Pick another name."
            )
    return None


def tier_slug_problem(slug: str) -> str | None:
    if "-" in slug:
        return (
            f"{slug!r} has a dash: a tier's slug is the last word of its namespaces' "
            "names (<tenant>-<app>-<tier>), so it may not hold one."
        )
    if slug in RESERVED_TIER_SLUGS:
        return f"{slug!r} is reserved: Berth uses it for a project's own names and files."
    return None
