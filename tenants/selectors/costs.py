"""Showback: what a tenant's allocated quota costs, namespace by namespace, time-weighted.

A namespace costs from when it was Ready until it went away (its allocations,
tenants.models.Allocation: a new one at each applied quota change), at the prices in force
at each hour (tenants.models.ClusterPrice: each from its date until the cluster's next).
Waiting for approval or a merge costs nothing. A closed month (tenants.models.ClosedMonth)
is read from the rows it was counted into, plus the dated adjustments added since; an open
one is worked out from the history (tenants.charging). Cost is of the quota allocated;
measured usage is beside it (tenants.usage, tenants.selectors.usage_history). Hours a
namespace slept (hibernation) are charged at the asleep prices, and what that saved is
shown beside what it cost.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

from django.utils import timezone

from tenants import charging
from tenants.choices import NamespaceState
from tenants.models import Tenant
from tenants.selectors.charges import (
    Adjustment,
    MonthPieces,
    month_pieces,
    month_start,
    month_window,
    next_month,
)

CENT = Decimal("0.01")


@dataclass
class NamespaceCost:
    name: str
    cluster: str
    tier: str
    project: str
    state: str
    ephemeral: bool
    cpu_millis: int
    memory_mib: int
    storage_gib: int
    charged_from: datetime
    ended_at: datetime | None  # when it stopped holding its quota; None while it holds it
    currency: str
    per_hour: Decimal
    month: Decimal = Decimal(0)
    today: Decimal = Decimal(0)
    expires_at: datetime | None = None
    until_expiry: Decimal | None = None
    by_day: dict[date, Decimal] = field(default_factory=dict)
    asleep: bool = False  # asleep now (at the end of the month's last piece)
    # Per day it slept: hours asleep and what sleeping saved (awake cost less asleep cost).
    asleep_by_day: dict[date, tuple[Decimal, Decimal]] = field(default_factory=dict)

    @property
    def per_day(self) -> Decimal:
        return self.per_hour * 24

    @property
    def asleep_hours(self) -> Decimal:
        return sum((hours for hours, _ in self.asleep_by_day.values()), Decimal(0))

    @property
    def savings(self) -> Decimal:
        return sum((saved for _, saved in self.asleep_by_day.values()), Decimal(0))


@dataclass
class DayCost:
    day: date
    amount: Decimal


@dataclass
class TenantCosts:
    tenant: Tenant
    month: date
    now: datetime
    currency: str
    closed: bool = False
    namespaces: list[NamespaceCost] = field(default_factory=list)
    adjustments: list[Adjustment] = field(default_factory=list)
    days: list[DayCost] = field(default_factory=list)
    projects: list[tuple[str, Decimal]] = field(default_factory=list)
    tiers: list[tuple[str, Decimal]] = field(default_factory=list)
    unpriced_clusters: list[str] = field(default_factory=list)
    other_currencies: list[str] = field(default_factory=list)

    @property
    def charged(self) -> Decimal:
        return sum(
            (each.month for each in self.namespaces if each.currency == self.currency), Decimal(0)
        )

    @property
    def adjusted(self) -> Decimal:
        return sum(
            (each.amount for each in self.adjustments if each.currency == self.currency), Decimal(0)
        )

    @property
    def total(self) -> Decimal:
        return self.charged + self.adjusted

    @property
    def today(self) -> Decimal:
        return sum(
            (each.today for each in self.namespaces if each.currency == self.currency), Decimal(0)
        )

    @property
    def until_expiry(self) -> Decimal:
        return sum((each.until_expiry or Decimal(0) for each in self.namespaces), Decimal(0))

    @property
    def asleep_hours(self) -> Decimal:
        """Namespace-hours slept in the month (hibernation)."""
        return sum((each.asleep_hours for each in self.namespaces), Decimal(0))

    @property
    def savings(self) -> Decimal:
        """What sleeping saved in the month: those hours awake less what they cost."""
        return sum(
            (each.savings for each in self.namespaces if each.currency == self.currency),
            Decimal(0),
        )


def tenant_costs(
    tenant: Tenant,
    *,
    month: date | None = None,
    now: datetime | None = None,
    read: MonthPieces | None = None,
) -> TenantCosts:
    """What `tenant` holds costs in `month` (default: this one), per namespace, project,
    tier and day, in the currency of its clusters' prices."""
    return costs_of([tenant], month=month, now=now, read=read)[0]


def costs_of(
    tenants: list[Tenant],
    *,
    month: date | None = None,
    now: datetime | None = None,
    read: MonthPieces | None = None,
) -> list[TenantCosts]:
    """tenant_costs of each of `tenants`, read in a fixed number of queries (none when the
    caller has `read` the month already)."""
    now = now or timezone.now()
    first = month_start(month or timezone.localdate(now))
    start, end = month_window(first, now)
    found = read if read is not None else month_pieces(first, now, tenants=tenants)
    pieces, info, adjustments, closed = found.pieces, found.about, found.adjustments, found.closed
    by_tenant: dict[int, dict[int, list[charging.Piece]]] = defaultdict(lambda: defaultdict(list))
    for piece in pieces:
        by_tenant[info[piece.namespace]["tenant"]][piece.namespace].append(piece)
    unpriced = defaultdict(set)
    for each in info.values():
        if each["unpriced"]:
            unpriced[each["tenant"]].add(each["cluster"])
    days = charging.days_of(first, next_month(first), timezone.get_current_timezone())
    return [
        _costs(
            TenantCosts(
                tenant=tenant,
                month=first,
                now=now,
                currency="EUR",
                closed=closed,
                adjustments=adjustments.get(tenant.pk, []),
                unpriced_clusters=sorted(unpriced[tenant.pk]),
            ),
            by_tenant[tenant.pk],
            info,
            days,
        )
        for tenant in tenants
    ]


def _costs(
    costs: TenantCosts,
    pieces_by_namespace: dict[int, list[charging.Piece]],
    info: dict[int, dict],
    days: list,
) -> TenantCosts:
    today = timezone.localdate(costs.now)
    _, window_end = month_window(costs.month, costs.now)
    currencies = [pieces[-1].currency for pieces in pieces_by_namespace.values()]
    costs.currency = main_currency(currencies)
    daily: dict[date, Decimal] = defaultdict(Decimal)
    for pk, pieces in pieces_by_namespace.items():
        pieces.sort(key=lambda piece: piece.start)
        last, about = pieces[-1], info[pk]
        holding = about["state"] in (NamespaceState.ACTIVE, NamespaceState.DECOMMISSIONING)
        row = NamespaceCost(
            name=about["name"],
            cluster=about["cluster"],
            tier=about["tier"],
            project=about["project"],
            state=about["state"],
            ephemeral=about["ephemeral"],
            cpu_millis=last.cpu_millis,
            memory_mib=last.memory_mib,
            storage_gib=last.storage_gib,
            charged_from=pieces[0].start,
            ended_at=None if holding and last.end >= window_end else last.end,
            currency=last.currency,
            per_hour=last.per_hour,
            expires_at=about["expires_at"],
        )
        row.asleep = last.asleep and row.ended_at is None
        for piece in pieces:
            for day, amount in charging.by_day(piece, days).items():
                row.by_day[day] = row.by_day.get(day, Decimal(0)) + amount
            for day, (hours, saved) in charging.asleep_by_day(piece, days).items():
                slept, before = row.asleep_by_day.get(day, (Decimal(0), Decimal(0)))
                row.asleep_by_day[day] = (slept + hours, before + saved)
        row.month = sum(row.by_day.values(), Decimal(0))
        row.today = row.by_day.get(today, Decimal(0))
        if row.currency == costs.currency:
            for day, amount in row.by_day.items():
                daily[day] += amount
        if holding and row.expires_at and row.expires_at > costs.now:
            row.until_expiry = row.per_hour * charging.hours_between(costs.now, row.expires_at)
        costs.namespaces.append(row)
    costs.namespaces.sort(key=lambda row: (row.cluster, row.name, row.charged_from))
    costs.other_currencies = sorted(set(currencies) - {costs.currency})
    costs.days = [DayCost(day=day, amount=daily.get(day, Decimal(0))) for day, _, _ in days]
    costs.projects = _grouped(costs, lambda row: row.project or "(no project)")
    costs.tiers = _grouped(costs, lambda row: row.tier)
    return costs


def _grouped(costs: TenantCosts, key) -> list[tuple[str, Decimal]]:
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for row in costs.namespaces:
        if row.currency == costs.currency:
            totals[key(row)] += row.month
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def main_currency(currencies: list[str]) -> str:
    """The currency totals are given in: the one most used (EUR if none)."""
    counted: dict[str, int] = defaultdict(int)
    for currency in currencies:
        counted[currency] += 1
    return max(sorted(counted), key=counted.__getitem__) if counted else "EUR"


def rounded(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)
