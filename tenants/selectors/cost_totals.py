"""Costs added up by the database, for the pages that show every tenant at once (the
dashboard's card, the platform's costs page), however many namespaces there are.

A namespace's hourly price is linear in its quota (tenants.pricing.hourly), so what the
allocations on one cluster cost under one price list is that list's prices times the sums
of quota × seconds held while it was in force: one grouped query per price list in the
window, grouped apart asleep and awake (hibernation: CPU and memory at the asleep prices).
A closed month is the sum of its rows. The figures are the tenant page's
(tenants.selectors.costs), which tests/tenants/test_cost_totals.py checks.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db.models import (
    Count,
    DateTimeField,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, Greatest, Least
from django.utils import timezone

from tenants.choices import ChargeKind
from tenants.models import Allocation, Cluster, MonthlyCharge, Tenant
from tenants.pricing import COMPUTE_PRICES, HOURS_PER_MONTH, PRICE_FIELDS
from tenants.selectors.charges import (
    is_closed,
    midnight,
    month_start,
    month_window,
    price_lists,
)
from tenants.selectors.costs import main_currency


@dataclass
class Total:
    """What one group (a tenant, a cluster, a tier) holds in a month: the namespaces
    priced, what they cost so far and today, in `currency` (its most common one), the hours
    its namespaces slept and what sleeping saved."""

    key: Any
    currency: str = "EUR"
    count: int = 0
    total: Decimal = Decimal(0)
    today: Decimal = Decimal(0)
    asleep_hours: Decimal = Decimal(0)
    savings: Decimal = Decimal(0)
    unpriced_clusters: list[str] = field(default_factory=list)
    by_currency: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))


@dataclass
class TenantTotal(Total):
    @property
    def tenant(self) -> Tenant:
        return self.key


class _Seconds(Func):
    """Seconds from the first datetime to the second, as the database counts them."""

    arg_joiner = " - "
    template = "EXTRACT(EPOCH FROM (%(expressions)s))"
    output_field = FloatField()

    def __init__(self, earlier: Any, later: Any) -> None:
        super().__init__(later, earlier)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="((julianday(%(expressions)s)) * 86400.0)",
            arg_joiner=") - julianday(",
            **extra,
        )


def _at(moment: datetime) -> Value:
    return Value(moment, output_field=DateTimeField())


QUOTA = {"cpu": "cpu_millis", "memory": "memory_mib", "storage": "storage_gib"}


def _held_for(start: datetime, end: datetime, name: str) -> dict[str, Sum]:
    """Sums over a group of allocations of each quota × the seconds it was held between
    `start` and `end`."""
    held = Greatest(  # none, for an allocation that ended before `start`
        _Seconds(
            Greatest(F("started_at"), _at(start)),
            Least(Coalesce(F("ended_at"), _at(end)), _at(end)),
        ),
        Value(0.0, output_field=FloatField()),
    )
    sums = {
        f"{name}_{what}": Sum(ExpressionWrapper(F(column) * held, output_field=FloatField()))
        for what, column in QUOTA.items()
    }
    sums[f"{name}_each"] = Sum(held)
    return sums


def _seconds(sums: dict[str, Any], name: str, what: str) -> Decimal:
    value = sums[f"{name}_{what}"]
    return Decimal(str(value)) if value is not None else Decimal(0)


def _cost(
    prices: tuple[Decimal, ...], sums: dict[str, Any], name: str, *, asleep: bool = False
) -> Decimal:
    """What the sums `name` come to at `prices` (asleep or awake): tenants.pricing.hourly,
    summed."""
    price = dict(zip(PRICE_FIELDS, prices, strict=True))
    cpu, memory = COMPUTE_PRICES[asleep]
    per_second = (
        _seconds(sums, name, "cpu") / 1000 * price[cpu]
        + _seconds(sums, name, "memory") / 1024 * price[memory]
        + _seconds(sums, name, "storage") * price["storage_gib_month"] / HOURS_PER_MONTH
        + _seconds(sums, name, "each") * price["namespace_month"] / HOURS_PER_MONTH
    )
    return per_second / 3600


def _overlapping(start: datetime, end: datetime) -> Q:
    return Q(started_at__lt=end) & (Q(ended_at__isnull=True) | Q(ended_at__gt=start))


def totals_by(
    group: str,
    *,
    month: date | None = None,
    now: datetime | None = None,
    tenants: list[Tenant] | None = None,
) -> dict[Any, Total]:
    """Group value → its Total in `month` (default: this one). `group` is a path from an
    allocation: "tenant_id", "cluster__name" or "namespace__tier__slug"."""
    now = now or timezone.now()
    first = month_start(month or timezone.localdate(now))
    start, end = month_window(first, now)
    allocations = Allocation.objects.all()
    if tenants is not None:
        allocations = allocations.filter(tenant__in=tenants)
    lines: dict[Any, Total] = {}

    def line(key: Any) -> Total:
        return lines.setdefault(key, Total(key=key))

    if is_closed(first):
        charged = MonthlyCharge.objects.filter(month=first)
        if group != "tenant_id":  # an adjustment is a tenant's, not a cluster's or a tier's
            charged = charged.filter(kind=ChargeKind.CHARGE)
        if tenants is not None:
            charged = charged.filter(tenant__in=tenants)
        closed_group = {
            "tenant_id": "tenant_id",
            "cluster__name": "cluster_name",
            "namespace__tier__slug": "tier_slug",
        }[group]
        asleep = Q(kind=ChargeKind.CHARGE, asleep=True)
        for key, currency, amount, count, saved, slept in (
            charged.order_by()
            .values_list(closed_group, "currency")
            .annotate(
                amount=Sum("cost"),
                namespaces=Count("namespace_name", distinct=True, filter=Q(kind=ChargeKind.CHARGE)),
                saved=Sum("savings", filter=asleep),
                slept=Sum(_Seconds(F("charged_from"), F("charged_until")), filter=asleep),
            )
        ):
            line(key).by_currency[currency] += amount
            line(key).by_currency["saved:" + currency] += saved or Decimal(0)
            line(key).asleep_hours += Decimal(str(slept or 0)) / 3600
            line(key).count += count
        return _settled(lines, counts={})

    lists = price_lists()
    priced = {each.cluster for each in lists}
    held = allocations.filter(_overlapping(start, end))
    counts: dict[Any, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    currency_of = {
        each.cluster: each.currency for each in lists if each.end is None or each.end > start
    }
    unpriced = []
    for key, cluster, count in (
        held.order_by().values_list(group, "cluster_id").annotate(Count("namespace", distinct=True))
    ):
        if cluster in priced:
            counts[key][currency_of.get(cluster, "EUR")] += count
        else:
            unpriced.append((key, cluster))
    if unpriced:
        names = dict(
            Cluster.objects.filter(pk__in={c for _, c in unpriced}).values_list("pk", "name")
        )
        for key, cluster in unpriced:
            line(key).unpriced_clusters.append(names[cluster])
    today_start = max(midnight(timezone.localdate(now)), start)
    for each in lists:
        list_start, list_end = max(start, each.start), min(end, each.end or end)
        if list_start >= list_end:
            continue
        sums = _held_for(list_start, list_end, "month")
        counts_today = today_start < list_end
        if counts_today:
            sums |= _held_for(max(today_start, list_start), list_end, "today")
        for group_sums in (
            held.filter(cluster_id=each.cluster)
            .filter(_overlapping(list_start, list_end))
            .order_by()
            .values(group, "asleep")
            .annotate(**sums)
        ):
            total, asleep = line(group_sums[group]), group_sums["asleep"]
            cost = _cost(each.prices, group_sums, "month", asleep=asleep)
            total.by_currency[each.currency] += cost
            if asleep:
                total.asleep_hours += _seconds(group_sums, "month", "each") / 3600
                total.by_currency["saved:" + each.currency] += (
                    _cost(each.prices, group_sums, "month") - cost
                )
            if counts_today:
                total.by_currency["today:" + each.currency] += _cost(
                    each.prices, group_sums, "today", asleep=asleep
                )
    return _settled(lines, counts)


def _settled(lines: dict[Any, Total], counts: dict[Any, dict[str, int]]) -> dict[Any, Total]:
    for key, total in lines.items():
        by_currency = counts.get(key) or {}
        if by_currency:
            total.currency = main_currency(
                [currency for currency, count in by_currency.items() for _ in range(count)]
            )
            total.count = sum(by_currency.values())
        else:
            total.currency = main_currency([c for c in total.by_currency if ":" not in c])
        total.total = total.by_currency.get(total.currency, Decimal(0))
        total.today = total.by_currency.get("today:" + total.currency, Decimal(0))
        total.savings = total.by_currency.get("saved:" + total.currency, Decimal(0))
        total.unpriced_clusters = sorted(set(total.unpriced_clusters))
    return lines


def totals_by_tenant(
    tenants: list[Tenant], *, month: date | None = None, now: datetime | None = None
) -> list[TenantTotal]:
    """Each of `tenants`' line of the dashboard's card, dearest first."""
    found = totals_by("tenant_id", month=month, now=now, tenants=tenants)
    lines = []
    for tenant in tenants:
        total = found.get(tenant.pk, Total(key=tenant))
        lines.append(
            TenantTotal(
                key=tenant,
                currency=total.currency,
                count=total.count,
                total=total.total,
                today=total.today,
                asleep_hours=total.asleep_hours,
                savings=total.savings,
                unpriced_clusters=total.unpriced_clusters,
            )
        )
    return sorted(lines, key=lambda line: (-line.total, line.tenant.slug))
