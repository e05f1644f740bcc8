"""Used against allocated, month over month: for each of a tenant's last months, the CPU
core-hours and memory GiB-hours its namespaces held (their allocations' pieces,
tenants.selectors.charges.months_pieces), what they used (the daily averages collected into
tenants.models.UsageDay, times the hours held each day), what was idle, and what the idle
part cost. The arithmetic is tenants.usage_history's; this reads the rows it needs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime

from django.utils import timezone

from tenants import charging
from tenants.models import Tenant, UsageDay
from tenants.selectors.charges import (
    MonthPieces,
    month_start,
    months_pieces,
    next_month,
    previous_month,
)
from tenants.selectors.costs import main_currency
from tenants.usage_history import MonthUsage

MONTHS = 6
MONTHS_MAX = 24


@dataclass
class UsageMonth:
    """One month: `figures` in `currency` (namespaces priced in another are left out and
    named in `other_currencies`)."""

    month: date
    closed: bool
    currency: str
    figures: MonthUsage = field(default_factory=MonthUsage)
    other_currencies: list[str] = field(default_factory=list)


def last_months(months: int = MONTHS, *, now: datetime | None = None) -> list[date]:
    """The first days of the last `months` months, oldest first, this one last."""
    firsts = [month_start(timezone.localdate(now or timezone.now()))]
    while len(firsts) < months:
        firsts.insert(0, previous_month(firsts[0]))
    return firsts


def usage_history(
    tenant: Tenant,
    *,
    months: int = MONTHS,
    now: datetime | None = None,
    read: list[MonthPieces] | None = None,
) -> list[UsageMonth]:
    """The last `months` months of `tenant`, oldest first, this one (so far) last; from
    `read` when the caller has read them (tenants.selectors.charges.months_pieces)."""
    now = now or timezone.now()
    firsts = last_months(months, now=now)
    found = read if read is not None else months_pieces(firsts, now, tenants=[tenant])
    used = _used_by_day(
        {piece.namespace for each in found for piece in each.pieces if piece.namespace > 0},
        since=firsts[0],
        until=next_month(firsts[-1]),
    )
    zone = timezone.get_current_timezone()
    history = []
    for each in found:
        latest: dict[int, charging.Piece] = {}
        for piece in sorted(each.pieces, key=lambda piece: piece.start):
            latest[piece.namespace] = piece
        currencies = [piece.currency for piece in latest.values()]
        month = UsageMonth(month=each.first, closed=each.closed, currency=main_currency(currencies))
        month.other_currencies = sorted(set(currencies) - {month.currency})
        days = charging.days_of(each.first, next_month(each.first), zone)
        for piece in each.pieces:
            if piece.currency == month.currency:
                month.figures.add(piece, days, used.get(piece.namespace, {}))
        history.append(month)
    return history


def _used_by_day(
    namespaces: set[int], *, since: date, until: date
) -> dict[int, dict[date, tuple[float, float]]]:
    """Namespace → day → (CPU cores, GiB) measured, from `since` until `until` (excluded)."""
    used: dict[int, dict[date, tuple[float, float]]] = defaultdict(dict)
    rows = UsageDay.objects.filter(namespace__in=namespaces, day__gte=since, day__lt=until)
    for namespace, day, cores, gib in rows.values_list(
        "namespace_id", "day", "cpu_cores", "memory_gib"
    ):
        used[namespace][day] = (cores, gib)
    return used
