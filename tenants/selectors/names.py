"""The namespace registry as platform admins read it: every live name, prefix overlaps.

Who a name belongs to and why a request may not have it: `tenants.name_registry`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Concat
from django.db.models.lookups import StartsWith

from tenants.choices import NamePurpose
from tenants.models import NamespaceClaim, Tenant
from tenants.name_registry import live_claims


def claims_visible_to_admin() -> QuerySet[NamespaceClaim]:
    """The whole registry, for platform admins: every live name with its owner."""
    return (
        live_claims()
        .select_related("cluster", "tenant", "namespace", "request")
        .order_by("cluster__name", "name")
    )


# How the Names page calls what a tenant's prefix came to cover.
_HOLDERS = {
    NamePurpose.PLATFORM: "platform",
    NamePurpose.BERTH: "Berth's own",
    NamePurpose.FOUND: "found on the cluster",
}


@dataclass(frozen=True)
class PrefixOverlap:
    """A live name held for something else that a tenant's prefix `<slug>-*` covers: the
    tenant's AppProject, Flux fences and admission parameters reach it."""

    claim: NamespaceClaim
    tenant: str  # the slug whose prefix covers the name

    @property
    def holder(self) -> str:
        if self.claim.purpose in _HOLDERS:
            return _HOLDERS[self.claim.purpose]
        return f"tenant {self.claim.tenant.slug}'s" if self.claim.tenant else "another's"

    @property
    def message(self) -> str:
        return (
            f"{self.claim.name} ({self.holder}) on {self.claim.cluster.name} is inside "
            f"tenant {self.tenant}'s prefix {self.tenant}-*: the tenant's AppProject "
            "reaches it."
        )


def prefix_overlaps() -> list[PrefixOverlap]:
    """Every live name a tenant's prefix covers that is not that tenant's: a platform
    namespace found or claimed after the tenant was onboarded (a slug covering one is
    refused when chosen: tenants.models.prefixes). One query, however many tenants."""
    prefix = Concat("slug", Value("-"))
    covering = (
        Tenant.objects.filter(StartsWith(OuterRef("name"), prefix))
        .order_by("slug")
        .values("slug")[:1]
    )
    # A tenant's own names start with its prefix; the rest are the candidates.
    others = Q(tenant__isnull=True) | ~Q(name__startswith=Concat("tenant__slug", Value("-")))
    claims = (
        live_claims()
        .filter(others)
        .annotate(covered_by=Subquery(covering))
        .filter(covered_by__isnull=False)
        .select_related("cluster", "tenant")
        .order_by("cluster__name", "name")
    )
    return [PrefixOverlap(claim=claim, tenant=claim.covered_by) for claim in claims]
