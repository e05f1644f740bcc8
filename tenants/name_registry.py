"""The namespace registry, read: who a name belongs to, and why a request may not have it.

Beside the models (like `tenants.budget`) rather than among the selectors: a request
kind's payload validation (`tenants.kinds`) asks it, and the selectors read the kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db.models import QuerySet

from tenants.choices import GitOpsEngine, NamePurpose, NamespaceState
from tenants.models import Cluster, EnvironmentTier, NamespaceClaim, Project, Tenant
from tenants.naming import (
    argocd_apps_namespace,
    gitops_namespace,
    kargo_namespace,
    namespace_name,
    outside_prefix_reason,
    reserved_reason,
)

# Purposes whose name many requests of one owner use: the tenant's Argo CD applications
# and Flux GitOps namespaces (every project of the tenant), a namespace shared by
# environments, and the platform's namespaces (registered again with each cluster change).
SHAREABLE = frozenset(
    {
        NamePurpose.ARGOCD_APPS,
        NamePurpose.GITOPS,
        NamePurpose.SHARED,
        NamePurpose.PLATFORM,
        NamePurpose.BERTH,
    }
)


def live_claims() -> QuerySet[NamespaceClaim]:
    return NamespaceClaim.objects.filter(released_at__isnull=True)


def claim_of(cluster: Cluster, name: str) -> NamespaceClaim | None:
    return (
        live_claims()
        .filter(cluster=cluster, name=name)
        .select_related("tenant", "namespace", "cluster")
        .first()
    )


def owner_phrase(claim: NamespaceClaim, *, tenant: Tenant | None) -> str:
    """What owns the name, as told to someone of `tenant`: another tenant's details stay
    unsaid."""
    purpose = NamePurpose(claim.purpose)
    if purpose == NamePurpose.PLATFORM:
        return "reserved for the cluster's platform components"
    if purpose == NamePurpose.BERTH:
        return "Berth's own namespace"
    if purpose == NamePurpose.FOUND:
        return "a namespace that was on the cluster before Berth, not Berth's to give"
    if tenant is None or claim.tenant_id != tenant.pk:
        return "another tenant's namespace"
    if purpose == NamePurpose.TIER:
        return f"the {claim.tier} namespace of {claim.app}"
    if purpose == NamePurpose.EPHEMERAL:
        return f"the namespace of ephemeral environment {claim.environment} of {claim.app}"
    if purpose == NamePurpose.KARGO:
        return f"the Kargo project namespace of {claim.app}"
    if purpose == NamePurpose.ARGOCD_APPS:
        return f"the Argo CD applications namespace of {claim.tenant.slug}"
    if purpose == NamePurpose.GITOPS:
        return f"the Flux GitOps namespace of {claim.tenant.slug}"
    return f"a namespace shared by {claim.tenant.slug}'s ephemeral environments"


def same_owner(claim: NamespaceClaim, *, purpose: str, tenant: Tenant | None) -> bool:
    """May a request of `tenant` use this claimed name for `purpose` as it is (the name is
    shared by design)?"""
    return (
        claim.purpose == purpose
        and purpose in SHAREABLE
        and claim.tenant_id == (tenant.pk if tenant else None)
    )


def name_problem(
    cluster: Cluster, name: str, *, purpose: str, tenant: Tenant | None, **place: str
) -> str | None:
    """Why `name` cannot be used for `purpose` by `tenant` on `cluster`, or None if it can.

    The same thing asked for twice is "already requested" or "already exists"; anything
    else is refused saying what owns the name (two long names cut to the same hash, a rule
    naming the project's Kargo namespace, a platform namespace...)."""
    return claim_problem(
        claim_of(cluster, name), cluster, name, purpose=purpose, tenant=tenant, **place
    )


def claim_problem(
    claim: NamespaceClaim | None,
    cluster: Cluster,
    name: str,
    *,
    purpose: str,
    tenant: Tenant | None,
    app: str = "",
    tier: str = "",
    environment: str = "",
) -> str | None:
    """`name_problem` with the name's live claim already read (None: unclaimed); `app`,
    `tier` and `environment` place the name in its owner's tenant."""
    if claim is None or same_owner(claim, purpose=purpose, tenant=tenant):
        return None
    same_thing = (
        claim.purpose == purpose
        and claim.tenant_id == (tenant.pk if tenant else None)
        and (claim.app, claim.tier, claim.environment) == (app, tier, environment)
    )
    if same_thing:
        waiting = claim.namespace is None or claim.namespace.state == NamespaceState.REQUESTED
        if waiting and claim.request_id:
            return f"{name} is already requested (request #{claim.request_id})."
        return f"{name} already exists on {cluster.name}."
    return f"{name} on {cluster.name} is {owner_phrase(claim, tenant=tenant)}."


def kept_for_tier(tenant: Tenant, name: str) -> str | None:
    """Is `name` the name of one of the tenant's projects in some tier, `<tenant>-<project>-
    <tier>`? Kept for that namespace whether or not it exists yet: a rule may not take it."""
    tiers = list(EnvironmentTier.objects.values_list("slug", flat=True))
    for project in tenant.projects.values_list("name", flat=True):
        for tier in tiers:
            if name == namespace_name(tenant.slug, project, tier):
                return f"{name} is kept for the {tier} namespace of {project}."
    return None


# --- what a request would take, and why it may not ---------------------------------------------


@dataclass(frozen=True)
class Wanted:
    """A name a request would take: for what (`purpose`), and where in its tenant."""

    name: str
    purpose: str
    app: str = ""
    tier: str = ""

    @property
    def owner(self) -> dict[str, str]:
        return {"purpose": self.purpose, "app": self.app, "tier": self.tier}


def tier_name(tenant: Tenant, app: str, tier: str) -> Wanted:
    """The namespace of `app` in `tier`."""
    return Wanted(namespace_name(tenant.slug, app, tier), NamePurpose.TIER, app, tier)


def project_names(tenant: Tenant, *, app: str, tiers: Sequence[str], engine: str) -> list[Wanted]:
    """Every name a new project takes on its cluster: its namespace in each tier; on Argo CD
    + Kargo its Kargo project's namespace (named as the plan names it); and the tenant's
    own Argo CD applications or Flux GitOps namespace, which its projects share."""
    wanted = [tier_name(tenant, app, tier) for tier in tiers]
    if engine == GitOpsEngine.ARGOCD_KARGO:
        wanted.append(Wanted(kargo_namespace(tenant.slug, app), NamePurpose.KARGO, app))
    if engine in (GitOpsEngine.ARGOCD, GitOpsEngine.ARGOCD_KARGO):
        wanted.append(Wanted(argocd_apps_namespace(tenant.slug), NamePurpose.ARGOCD_APPS))
    elif engine == GitOpsEngine.FLUX:
        wanted.append(Wanted(gitops_namespace(tenant.slug), NamePurpose.GITOPS))
    return wanted


def project_exists(tenant: Tenant, app: str) -> str | None:
    """A new project may not reuse the name of one the tenant has."""
    if Project.objects.filter(tenant=tenant, name=app).exists():
        return f"Project {app!r} already exists."
    return None


@dataclass(frozen=True)
class Refusal:
    reason: str
    taken: bool  # the registry holds it (it exists, or a request claimed it): not just reserved


def refusal(cluster: Cluster | None, wanted: Wanted, *, tenant: Tenant) -> Refusal | None:
    """Why a request of `tenant` may not take `wanted` on `cluster`: a reserved name, one
    outside the tenant's prefix, or one the registry holds for something else (or for this
    very thing, already requested). Submission refuses on it (tenants.payloads) and the
    request forms' preview says it as people type, so the two cannot disagree."""
    reason = reserved_reason(
        wanted.name, berth_namespace=settings.BERTH_NAMESPACE
    ) or outside_prefix_reason(wanted.name, tenant=tenant.slug)
    if reason:
        return Refusal(reason, taken=False)
    if cluster is None:
        return None
    held = name_problem(cluster, wanted.name, tenant=tenant, **wanted.owner)
    return Refusal(held, taken=True) if held else None
