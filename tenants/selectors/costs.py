"""Showback: what a tenant's allocated quota costs, namespace by namespace, at the prices
platform admins set per cluster (tenants.models.ClusterPrice).

A namespace costs from its creation until it went away: for a decommissioned namespace,
the moment the request that removed it finished (the audit log's event), or for an
ephemeral environment's own namespace its `ended_at`. Cost is of the quota allocated, not
of what is used (tenants.selectors.usage adds measured usage where Prometheus is set).
The prices in force now apply to the whole window: Berth keeps no history of prices.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Q
from django.utils import timezone

from tenants.choices import NamespaceState
from tenants.kinds import kind_for, kinds_where
from tenants.models import (
    AuditEvent,
    ClusterPrice,
    EphemeralEnvironment,
    Namespace,
    Request,
    Tenant,
)
from tenants.pricing import PRICE_FIELDS, hourly

CENT = Decimal("0.01")
# A claim is not yet a namespace: nothing runs, nothing is billed.
HELD = ~Q(state=NamespaceState.REQUESTED)
# Requests that take namespaces away, and the audit events that say they finished.
REMOVALS = kinds_where(removes_namespaces=True)
FINISHED = ("request.mark_decommissioned", "request.mark_ready")


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
    created_at: datetime
    ended_at: datetime | None
    end_unknown: bool
    currency: str
    per_hour: Decimal
    month: Decimal = Decimal(0)
    today: Decimal = Decimal(0)
    expires_at: datetime | None = None
    until_expiry: Decimal | None = None
    measured: dict[str, float] | None = None
    by_day: dict[date, Decimal] = field(default_factory=dict)

    @property
    def per_day(self) -> Decimal:
        return self.per_hour * 24


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
    namespaces: list[NamespaceCost] = field(default_factory=list)
    days: list[DayCost] = field(default_factory=list)
    projects: list[tuple[str, Decimal]] = field(default_factory=list)
    tiers: list[tuple[str, Decimal]] = field(default_factory=list)
    unpriced_clusters: list[str] = field(default_factory=list)
    other_currencies: list[str] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((each.month for each in self.namespaces), Decimal(0))

    @property
    def today(self) -> Decimal:
        return sum((each.today for each in self.namespaces), Decimal(0))

    @property
    def until_expiry(self) -> Decimal:
        return sum((each.until_expiry or Decimal(0) for each in self.namespaces), Decimal(0))


def parse_month(text: str | None) -> date | None:
    """`YYYY-MM` → its first day; None when absent; ValueError when not a month."""
    if not text:
        return None
    year, _, month = text.partition("-")
    if not (len(year) == 4 and year.isdigit() and len(month) == 2 and month.isdigit()):
        raise ValueError(text)
    if not 1970 <= int(year) <= 9998:  # Berth's records start later; the next month exists
        raise ValueError(f"{text}: a month between 1970-01 and 9998-12")
    return date(int(year), int(month), 1)


def month_start(day: date) -> date:
    return day.replace(day=1)


def next_month(first: date) -> date:
    return (first + timedelta(days=32)).replace(day=1)


def _days_of(first: date) -> list[tuple[date, datetime, datetime, Decimal]]:
    """The month's days with their start, end and length in hours (23 or 25 on the days
    the clocks change), worked out once for every namespace priced."""
    zone = timezone.get_current_timezone()
    days = []
    day = first
    while day < next_month(first):
        start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
        end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=zone)
        days.append((day, start, end, _hours(start, end)))
        day += timedelta(days=1)
    return days


def _hours(start: datetime, end: datetime) -> Decimal:
    seconds = max((end - start).total_seconds(), 0)
    return Decimal(seconds) / 3600


def tenant_costs(
    tenant: Tenant, *, month: date | None = None, now: datetime | None = None
) -> TenantCosts:
    """What `tenant` holds costs in `month` (default: this one), per namespace, project,
    tier and day, in the currency of its clusters' prices."""
    return costs_of([tenant], month=month, now=now)[0]


def costs_of(
    tenants: list[Tenant], *, month: date | None, now: datetime | None, narrowed: Q | None = None
) -> list[TenantCosts]:
    """tenant_costs of each of `tenants`, read in a fixed number of queries; of only the
    namespaces `narrowed` chooses, when given (tenants.selectors.cost_totals)."""
    now = now or timezone.now()
    zone = timezone.get_current_timezone()
    first = month_start(month or timezone.localdate(now))
    window_start = datetime.combine(first, datetime.min.time(), tzinfo=zone)
    window_end = min(datetime.combine(next_month(first), datetime.min.time(), tzinfo=zone), now)
    held = Namespace.objects.filter(HELD, tenant__in=tenants, created_at__lt=window_end)
    if narrowed is not None:
        held = held.filter(narrowed)
    namespaces = list(
        held.select_related("cluster", "tier", "project")
        # What a cost is worked out from; a namespace's drift and labels (JSON) are not.
        .only(
            *("name", "tenant_id", "state", "created_at", "expires_at", "request_id"),
            *("cpu_millis", "memory_mib", "storage_gib"),
            *("cluster__name", "tier__slug", "tier__is_ephemeral", "project__name"),
        )
        .order_by("cluster__name", "name")
    )
    prices = {price.cluster_id: price for price in ClusterPrice.objects.all()}
    # An environment's own namespace lives until the environment expires (extensions too),
    # and went when the environment ended.
    environments = list(
        EphemeralEnvironment.objects.filter(
            # A subquery: ten thousand namespaces never become ten thousand parameters.
            namespace__in=held.values("pk"),
            owns_namespace=True,
        ).values_list("namespace_id", "expires_at", "ended_at")
    )
    expiring = {pk: expires for pk, expires, ended in environments if ended is None}
    ended = {pk: gone for pk, _, gone in environments if gone is not None}
    ended |= _ended_at(
        [n for n in namespaces if n.state == NamespaceState.DECOMMISSIONED and n.pk not in ended]
    )
    by_tenant: dict[int, list[Namespace]] = defaultdict(list)
    for namespace in namespaces:
        by_tenant[namespace.tenant_id].append(namespace)
    return [
        _costs(
            tenant,
            by_tenant[tenant.pk],
            prices=prices,
            expiring=expiring,
            ended=ended,
            first=first,
            window=(window_start, window_end),
            now=now,
        )
        for tenant in tenants
    ]


def _costs(
    tenant: Tenant,
    namespaces: list[Namespace],
    *,
    prices: dict[int, ClusterPrice],
    expiring: dict[int, datetime],
    ended: dict[int, datetime],
    first: date,
    window: tuple[datetime, datetime],
    now: datetime,
) -> TenantCosts:
    window_start, window_end = window
    today = timezone.localdate(now)
    month_days = _days_of(first)
    main = main_currency(
        {
            namespace.cluster_id: prices[namespace.cluster_id]
            for namespace in namespaces
            if namespace.cluster_id in prices
        }
    )
    currencies = defaultdict(Decimal)
    rows = []
    daily: dict[date, Decimal] = defaultdict(Decimal)
    unpriced = set()
    for namespace in namespaces:
        price = prices.get(namespace.cluster_id)
        if price is None:
            unpriced.add(namespace.cluster.name)
            continue
        gone = namespace.state == NamespaceState.DECOMMISSIONED
        end = ended.get(namespace.pk) if gone else None
        if gone and end is None:
            end = namespace.created_at  # when it went is not known: nothing is counted
        if end is not None and end <= window_start:
            continue
        per_hour = hourly(
            cpu_millis=namespace.cpu_millis,
            memory_mib=namespace.memory_mib,
            storage_gib=namespace.storage_gib,
            prices={name: getattr(price, name) for name in PRICE_FIELDS},
        )
        row = NamespaceCost(
            name=namespace.name,
            cluster=namespace.cluster.name,
            tier=namespace.tier.slug,
            project=namespace.project.name if namespace.project_id else "",
            state=namespace.state,
            ephemeral=namespace.tier.is_ephemeral,
            cpu_millis=namespace.cpu_millis,
            memory_mib=namespace.memory_mib,
            storage_gib=namespace.storage_gib,
            created_at=namespace.created_at,
            ended_at=end if gone else None,
            end_unknown=gone and namespace.pk not in ended,
            currency=price.currency,
            per_hour=per_hour,
            expires_at=expiring.get(namespace.pk, namespace.expires_at),
        )
        alive_from = max(namespace.created_at, window_start)
        alive_until = min(end or window_end, window_end)
        for day, day_start, day_end, day_hours in month_days:
            if day_end <= alive_from or day_start >= alive_until:
                continue
            if alive_from <= day_start and day_end <= alive_until:
                amount = per_hour * day_hours  # the whole day, as most days are
            else:
                amount = per_hour * _hours(max(day_start, alive_from), min(day_end, alive_until))
            row.month += amount
            row.by_day[day] = amount
            if price.currency == main:
                daily[day] += amount
            if day == today:
                row.today += amount
        if not gone and row.expires_at and row.expires_at > now:
            row.until_expiry = per_hour * _hours(now, row.expires_at)
        currencies[price.currency] += row.month
        rows.append(row)
    costs = TenantCosts(
        tenant=tenant,
        month=first,
        now=now,
        currency=main,
        namespaces=rows,
        unpriced_clusters=sorted(unpriced),
        other_currencies=sorted(set(currencies) - {main}),
    )
    day = first
    while day < next_month(first):
        costs.days.append(DayCost(day=day, amount=daily.get(day, Decimal(0))))
        day += timedelta(days=1)
    costs.projects = _grouped(rows, main, lambda row: row.project or "(no project)")
    costs.tiers = _grouped(rows, main, lambda row: row.tier)
    return costs


def main_currency(prices: dict[int, ClusterPrice]) -> str:
    """The currency totals are given in: the one most clusters use (EUR if none)."""
    counted = defaultdict(int)
    for price in prices.values():
        counted[price.currency] += 1
    return max(sorted(counted), key=lambda currency: counted[currency]) if counted else "EUR"


def _grouped(rows: list[NamespaceCost], currency: str, key) -> list[tuple[str, Decimal]]:
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        if row.currency == currency:
            totals[key(row)] += row.month
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def _ended_at(gone: list[Namespace]) -> dict[int, datetime]:
    """Namespace id → when it went away: when the request that removed it finished, from
    the audit log."""
    if not gone:
        return {}
    removals = list(
        Request.objects.filter(tenant__in={n.tenant_id for n in gone}, kind__in=REMOVALS).values(
            "pk", "tenant_id", "kind", "payload"
        )
    )
    finished = {}
    for event in AuditEvent.objects.filter(
        object_type="tenants.request",
        action__in=FINISHED,
        object_id__in=[str(each["pk"]) for each in removals],
    ).order_by("created_at"):
        finished.setdefault(int(event.object_id), event.created_at)
    ended = {}
    for namespace in gone:
        candidates = [
            finished[each["pk"]]
            for each in removals
            if each["pk"] in finished
            and each["tenant_id"] == namespace.tenant_id
            and finished[each["pk"]] > namespace.created_at
            and _removes(each, namespace)
        ]
        if candidates:
            ended[namespace.pk] = min(candidates)
    return ended


def _removes(removal: dict, namespace: Namespace) -> bool:
    return kind_for(removal["kind"]).removes(removal["payload"] or {}, namespace)


def rounded(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)
