"""The dashboard's costs card: what every tenant's namespaces cost this month, added up by
the database.

A namespace costs its hourly price (tenants.pricing.hourly: linear in its quota) times the
hours it was held, so what a tenant's live namespaces on one cluster cost is the cluster's
prices times the sums of quota × hours held, which one grouped query adds up however many
namespaces there are. The namespaces that went away are priced one by one as the tenant's
page prices them (tenants.selectors.costs), but only those that went this month or could
have: the rest cost nothing in it. The figures are the tenant page's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db.models import (
    CharField,
    Count,
    DateTimeField,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
    Sum,
    Value,
)
from django.db.models.functions import Cast, Greatest
from django.utils import timezone

from tenants.choices import NamespaceState
from tenants.models import (
    AuditEvent,
    ClusterPrice,
    EphemeralEnvironment,
    Namespace,
    Request,
    Tenant,
)
from tenants.pricing import HOURS_PER_MONTH
from tenants.selectors.costs import (
    FINISHED,
    HELD,
    REMOVALS,
    TenantCosts,
    costs_of,
    main_currency,
    month_start,
    next_month,
)

GONE = Q(state=NamespaceState.DECOMMISSIONED)


@dataclass
class TenantTotal:
    """One line of the card: a tenant's priced namespaces held this month, what they cost
    so far and today (in `currency`, its clusters' most common one)."""

    tenant: Tenant
    currency: str = "EUR"
    count: int = 0
    total: Decimal = Decimal(0)
    today: Decimal = Decimal(0)
    unpriced_clusters: list[str] = field(default_factory=list)


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


# What a namespace's price is linear in: its quota, and being held at all.
QUOTA = {"cpu": "cpu_millis", "memory": "memory_mib", "storage": "storage_gib"}


def _held_for(start: datetime, end: datetime, name: str) -> dict[str, Sum]:
    """Sums over a group of namespaces of each quota × the seconds it was held between
    `start` and `end` (each from its creation if later)."""
    held = _Seconds(Greatest(F("created_at"), _at(start)), _at(end))
    sums = {
        f"{name}_{what}": Sum(ExpressionWrapper(F(column) * held, output_field=FloatField()))
        for what, column in QUOTA.items()
    }
    sums[f"{name}_each"] = Sum(held)
    return sums


def _cost(price: ClusterPrice, sums: dict[str, Any], name: str) -> Decimal:
    """What the sums `name` come to at `price`: tenants.pricing.hourly, summed."""

    def seconds(what: str) -> Decimal:
        value = sums[f"{name}_{what}"]
        return Decimal(str(value)) if value is not None else Decimal(0)

    per_second = (
        seconds("cpu") / 1000 * price.cpu_core_hour
        + seconds("memory") / 1024 * price.memory_gib_hour
        + seconds("storage") * price.storage_gib_month / HOURS_PER_MONTH
        + seconds("each") * price.namespace_month / HOURS_PER_MONTH
    )
    return per_second / 3600


def totals_by_tenant(
    tenants: list[Tenant], *, month: date | None = None, now: datetime | None = None
) -> list[TenantTotal]:
    """Each of `tenants`' line of the card, in a fixed number of queries and without a
    row per namespace, dearest first."""
    now = now or timezone.now()
    zone = timezone.get_current_timezone()
    first = month_start(month or timezone.localdate(now))
    window_start = datetime.combine(first, datetime.min.time(), tzinfo=zone)
    window_end = min(datetime.combine(next_month(first), datetime.min.time(), tzinfo=zone), now)
    today = timezone.localdate(now)
    today_start = datetime.combine(today, datetime.min.time(), tzinfo=zone)
    counts_today = first <= today < next_month(first) and today_start < window_end
    held = Namespace.objects.filter(HELD, tenant__in=tenants, created_at__lt=window_end)
    prices = {price.cluster_id: price for price in ClusterPrice.objects.all()}
    lines = {tenant.pk: TenantTotal(tenant=tenant) for tenant in tenants}

    # Currency and unpriced clusters: those of every namespace held, gone or not.
    clusters = defaultdict(set)
    unpriced = defaultdict(set)
    for tenant_id, cluster_id, cluster in (
        held.order_by().values_list("tenant_id", "cluster_id", "cluster__name").distinct()
    ):
        if cluster_id in prices:
            clusters[tenant_id].add(cluster_id)
        else:
            unpriced[tenant_id].add(cluster)
    for tenant_id, line in lines.items():
        line.currency = main_currency({pk: prices[pk] for pk in clusters[tenant_id]})
        line.unpriced_clusters = sorted(unpriced[tenant_id])

    if window_start < window_end:
        sums = _held_for(window_start, window_end, "month")
        if counts_today:
            sums |= _held_for(max(today_start, window_start), window_end, "today")
        live = (
            held.exclude(GONE)
            .filter(cluster_id__in=prices)
            .order_by()
            .values("tenant_id", "cluster_id")
            .annotate(held=Count("pk"), **sums)
        )
        for group in live:
            line, price = lines[group["tenant_id"]], prices[group["cluster_id"]]
            line.count += group["held"]
            line.total += _cost(price, group, "month")
            if counts_today:
                line.today += _cost(price, group, "today")
    else:  # a month still to come: what is held counts, for nothing
        counted = held.exclude(GONE).filter(cluster_id__in=prices).order_by().values("tenant_id")
        for group in counted.annotate(held=Count("pk")):
            lines[group["tenant_id"]].count += group["held"]

    for gone in _gone_costs(tenants, held, month=first, now=now, since=window_start):
        line = lines[gone.tenant.pk]
        line.count += len(gone.namespaces)
        line.total += gone.total
        line.today += gone.today
    return sorted(lines.values(), key=lambda line: (-line.total, line.tenant.slug))


def _gone_costs(
    tenants: list[Tenant],
    held: QuerySet[Namespace],
    *,
    month: date,
    now: datetime,
    since: datetime,
) -> list[TenantCosts]:
    """The tenant page's costs of the namespaces that went away and may have been held
    this month: made in it, or removed by a request that finished in it, or the namespace of
    an environment that ended in it. One that went earlier costs nothing now."""
    finished = AuditEvent.objects.filter(
        object_type="tenants.request", action__in=FINISHED, created_at__gte=since
    ).values("object_id")
    removing = (
        Request.objects.filter(kind__in=REMOVALS)
        .annotate(text=Cast("pk", CharField()))
        .filter(text__in=finished)
        .values("tenant_id")
    )
    ended = EphemeralEnvironment.objects.filter(owns_namespace=True, ended_at__gte=since)
    maybe = GONE & (
        Q(created_at__gte=since)
        | Q(tenant_id__in=removing)
        | Q(pk__in=ended.values("namespace_id"))
    )
    with_some = set(held.filter(maybe).order_by().values_list("tenant_id", flat=True).distinct())
    chosen = [tenant for tenant in tenants if tenant.pk in with_some]
    if not chosen:
        return []
    return costs_of(chosen, month=month, now=now, narrowed=maybe)
