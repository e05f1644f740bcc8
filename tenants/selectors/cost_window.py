"""Time-weighted cost over any window, not only a month: each piece of each month the
window touches (tenants.selectors.charges.month_pieces: closed months from their rows, open
ones from the history) clipped to the window and added up per namespace, project, tier,
tenant or cluster. A closed month's adjustments count for a tenant when the whole month is
inside the window (they correct the month, not a day of it)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.utils import timezone

from tenants.models import Tenant
from tenants.selectors.charges import midnight, month_pieces, month_start, next_month

GROUPS = ("namespace", "project", "tier", "tenant", "cluster")
LONGEST_DAYS = 366


@dataclass
class WindowCost:
    key: str
    currency: str
    cost: Decimal
    namespaces: int


def costs_over(
    start: datetime,
    end: datetime,
    *,
    by: str,
    tenants: list[Tenant] | None = None,
    now: datetime | None = None,
) -> list[WindowCost]:
    """What was held between `start` and `end` (not after now) cost, per `by` (one of
    GROUPS) and currency, dearest first. Of `tenants` only, when given."""
    if by not in GROUPS:
        raise ValueError(by)
    now = now or timezone.now()
    end = min(end, now)
    slugs = dict(Tenant.objects.values_list("pk", "slug"))
    totals: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    held: dict[tuple[str, str], set] = defaultdict(set)
    month = month_start(timezone.localdate(start))
    while start < end and midnight(month) < end:
        found = month_pieces(month, now, tenants=tenants)
        for piece in found.pieces:
            part = piece.within(start, end)
            if part is None:
                continue
            about = found.about[piece.namespace]
            key = (_key(by, about, slugs), part.currency)
            totals[key] += part.cost
            held[key].add(piece.namespace)
        whole_month = start <= midnight(month) and midnight(next_month(month)) <= end
        if by == "tenant" and whole_month:
            for tenant, corrections in found.adjustments.items():
                for each in corrections:
                    totals[(slugs[tenant], each.currency)] += each.amount
        month = next_month(month)
    found_costs = [
        WindowCost(key=key, currency=currency, cost=cost, namespaces=len(held[(key, currency)]))
        for (key, currency), cost in totals.items()
    ]
    return sorted(found_costs, key=lambda each: (-each.cost, each.key, each.currency))


def _key(by: str, about: dict, slugs: dict[int, str]) -> str:
    if by == "namespace":
        return f"{about['cluster']}/{about['name']}"
    if by == "project":
        return f"{slugs[about['tenant']]}/{about['project'] or '(no project)'}"
    if by == "tenant":
        return slugs[about["tenant"]]
    return about[by]  # tier, cluster
