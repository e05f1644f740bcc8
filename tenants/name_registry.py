"""The namespace registry, read: who a name belongs to, and why a request may not have it.

Beside the models (like `tenants.budget`) rather than among the selectors: a request
kind's payload validation (`tenants.kinds`) asks it, and the selectors read the kinds.
"""

from __future__ import annotations

from django.db.models import QuerySet

from tenants.choices import NamePurpose, NamespaceState
from tenants.models import Cluster, EnvironmentTier, NamespaceClaim, Tenant
from tenants.naming import namespace_name

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
