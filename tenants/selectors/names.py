"""The namespace registry as platform admins read it: every live name, a page at a time,
and prefix overlaps.

Who a name belongs to and why a request may not have it: `tenants.name_registry`.

Like the audit log, the registry's pages are cut by position, not by number: a page is the
names after (or before) the last one the reader saw, in (cluster, name) order, so the
hundredth page costs the queries of the first and no page counts the registry.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from django.db.models import Q, QuerySet, Value
from django.db.models.functions import Concat

from tenants.choices import NamePurpose
from tenants.errors import InvalidInput
from tenants.models import NamespaceClaim, Tenant
from tenants.name_registry import live_claims


def claims_visible_to_admin() -> QuerySet[NamespaceClaim]:
    """The whole registry, for platform admins: every live name with its owner."""
    return (
        live_claims()
        # A row links to its namespace and request by id: neither is read.
        .select_related("cluster", "tenant")
        .order_by("cluster__name", "name")
    )


BAD_CURSOR = "Not a page link the names registry gave out: start again from the first page."


@dataclass(frozen=True)
class NameCursor:
    """Where a page starts: after (`forward`) or before the name on the cluster, in the
    registry's order (cluster, then name; a live name is unique on its cluster)."""

    cluster: str
    name: str
    forward: bool = True

    @classmethod
    def at(cls, claim: NamespaceClaim, *, forward: bool) -> NameCursor:
        return cls(cluster=claim.cluster.name, name=claim.name, forward=forward)

    def facing(self, *, forward: bool) -> NameCursor:
        return NameCursor(self.cluster, self.name, forward=forward)

    def encode(self) -> str:
        text = f"{'n' if self.forward else 'p'}|{self.cluster}|{self.name}"
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> NameCursor:
        """The cursor a page link carries; anything else is InvalidInput on `cursor`."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
            direction, cluster, name = raw.split("|")
            if direction not in ("n", "p") or not cluster or not name:
                raise ValueError(raw)
            if len(cluster) > 63 or len(name) > 63 or not (cluster + name).isascii():
                raise ValueError(raw)
            return cls(cluster=cluster, name=name, forward=direction == "n")
        except (ValueError, UnicodeDecodeError, binascii.Error) as error:
            raise InvalidInput({"cursor": [BAD_CURSOR]}) from error


@dataclass(frozen=True)
class NamePage:
    claims: list[NamespaceClaim]
    next: NameCursor | None  # the page after this one, None on the last
    previous: NameCursor | None  # the page before it, None on the first


def names_page(
    claims: QuerySet[NamespaceClaim], *, cursor: NameCursor | None = None, size: int = 100
) -> NamePage:
    """One page of `claims` (already filtered) in the registry's order: at most two
    queries, however many names the registry holds."""
    if cursor is None:
        rows = list(_ordered(claims, forward=True)[: size + 1])
        more, rows = len(rows) > size, rows[:size]
        return NamePage(rows, NameCursor.at(rows[-1], forward=True) if more else None, None)
    forward = cursor.forward
    rows = list(_ordered(_beyond(claims, cursor, forward=forward), forward=forward)[: size + 1])
    more_read, rows = len(rows) > size, rows[:size]
    if not forward:
        rows.reverse()
    # Each link starts from the row at that edge of the page (from the cursor's own position
    # when the page is empty); the side the page was not read from takes one EXISTS.
    previous = NameCursor.at(rows[0], forward=False) if rows else cursor.facing(forward=False)
    following = NameCursor.at(rows[-1], forward=True) if rows else cursor.facing(forward=True)
    back = previous if forward else following
    more_back = _beyond(claims, back, forward=not forward).exists()
    more_after, more_before = (more_read, more_back) if forward else (more_back, more_read)
    return NamePage(rows, following if more_after else None, previous if more_before else None)


def _ordered(claims: QuerySet[NamespaceClaim], *, forward: bool) -> QuerySet[NamespaceClaim]:
    if forward:
        return claims.order_by("cluster__name", "name")
    return claims.order_by("-cluster__name", "-name")


def _beyond(
    claims: QuerySet[NamespaceClaim], cursor: NameCursor, *, forward: bool
) -> QuerySet[NamespaceClaim]:
    """The names strictly past the cursor's position, forward or backward."""
    if forward:
        return claims.filter(
            Q(cluster__name__gt=cursor.cluster)
            | Q(cluster__name=cursor.cluster, name__gt=cursor.name)
        )
    return claims.filter(
        Q(cluster__name__lt=cursor.cluster) | Q(cluster__name=cursor.cluster, name__lt=cursor.name)
    )


# How the Names page calls what a tenant's prefix came to cover.
_HOLDERS = {
    NamePurpose.PLATFORM: "platform",
    NamePurpose.BERTH: "Berth's own",
    NamePurpose.FOUND: "found on the cluster",
}


@dataclass(frozen=True)
class PrefixOverlap:
    """A live name held for something else that a tenant's prefix `<slug>-*` covers: it
    reads as the tenant's, though the tenant's fences (which name its namespaces) do not
    reach it."""

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
            f"tenant {self.tenant}'s prefix {self.tenant}-*: it reads as the tenant's. "
            "The tenant's AppProject and RBAC name its namespaces and do not reach it."
        )


def prefix_overlaps() -> list[PrefixOverlap]:
    """Every live name a tenant's prefix covers that is not that tenant's: a platform
    namespace found or claimed after the tenant was onboarded (a slug covering one is
    refused when chosen: tenants.models.prefixes). Two queries, however many names and
    tenants: the names not their tenant's own (a tenant's own start with its prefix), then
    the slugs, matched here; asking the database which slug covers each name made it ask
    for every live name before it set the tenants' own aside."""
    others = Q(tenant__isnull=True) | ~Q(name__startswith=Concat("tenant__slug", Value("-")))
    candidates = list(
        live_claims()
        .filter(others)
        .select_related("cluster", "tenant")
        .order_by("cluster__name", "name")
    )
    if not candidates:
        return []
    slugs = list(Tenant.objects.order_by("slug").values_list("slug", flat=True))
    found = []
    for claim in candidates:
        covering = next((slug for slug in slugs if claim.name.startswith(f"{slug}-")), None)
        if covering is not None:
            found.append(PrefixOverlap(claim=claim, tenant=covering))
    return found
