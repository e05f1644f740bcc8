"""Where a month's charges come from: the rows a closed month was counted into, or for an
open one the allocations and price lists priced by tenants.charging. Every showback page,
the closing of a month and the FOCUS export read a month through `month_pieces`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db.models import Q
from django.utils import timezone

from tenants import charging
from tenants.choices import ChargeKind, NamespaceState
from tenants.models import (
    Allocation,
    ClosedMonth,
    ClusterPrice,
    EphemeralEnvironment,
    MonthlyCharge,
    Namespace,
    Tenant,
)
from tenants.pricing import PRICE_FIELDS


@dataclass
class Adjustment:
    """A dated correction of a closed month, as a platform admin added it."""

    amount: Decimal
    currency: str
    note: str
    namespace: str
    added_at: datetime
    added_by: str


@dataclass
class MonthPieces:
    """A month's pieces (tenants.charging.Piece), what each piece's `namespace` key is
    (`about`: tenant, name, cluster, tier, ephemeral, project, state, expires_at, unpriced),
    and per tenant id the adjustments of a closed month."""

    first: date
    closed: bool
    pieces: list[charging.Piece] = field(default_factory=list)
    about: dict[int, dict] = field(default_factory=dict)
    adjustments: dict[int, list[Adjustment]] = field(default_factory=dict)


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


def previous_month(first: date) -> date:
    return (first - timedelta(days=1)).replace(day=1)


def midnight(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=timezone.get_current_timezone())


def month_window(first: date, now: datetime) -> tuple[datetime, datetime]:
    """The month from its first midnight until its last, or until now while it runs."""
    return midnight(first), min(midnight(next_month(first)), now)


def is_closed(first: date) -> bool:
    return ClosedMonth.objects.filter(month=first).exists()


def month_pieces(
    first: date, now: datetime | None = None, *, tenants: list[Tenant] | None = None
) -> MonthPieces:
    """The month that starts on `first`, up to now while it runs: from its rows once closed,
    else from the history. Of `tenants` only, when given."""
    now = now or timezone.now()
    if is_closed(first):
        return _closed(first, tenants)
    start, end = month_window(first, now)
    lists = price_lists()
    held = held_between(start, end, tenants=tenants)
    about = _namespaces({each.namespace for each in held})
    priced = {each.cluster for each in lists}
    for each in held:
        about[each.namespace]["unpriced"] = each.cluster not in priced
    return MonthPieces(
        first=first,
        closed=False,
        pieces=charging.pieces(held, lists, start=start, end=end),
        about=about,
    )


def price_lists() -> list[charging.PriceList]:
    """Every cluster's prices, each from its date until the cluster's next."""
    return charging.price_lists(
        (cluster, currency, tuple(prices), start)
        for cluster, currency, start, *prices in ClusterPrice.objects.values_list(
            "cluster_id", "currency", "effective_from", *PRICE_FIELDS
        )
    )


def held_between(start: datetime, end: datetime, *, tenants: list[Tenant] | None = None):
    """The allocations that overlap `start`..`end`, as tenants.charging reads them."""
    allocations = Allocation.objects.filter(started_at__lt=end).filter(
        Q(ended_at__isnull=True) | Q(ended_at__gt=start)
    )
    if tenants is not None:
        allocations = allocations.filter(tenant__in=tenants)
    return [
        charging.Held(*row)
        for row in allocations.values_list(
            "namespace_id",
            "cluster_id",
            "cpu_millis",
            "memory_mib",
            "storage_gib",
            "started_at",
            "ended_at",
        )
    ]


def _namespaces(ids: set[int]) -> dict[int, dict]:
    """Namespace id → what its cost rows show of it."""
    expiring = dict(
        EphemeralEnvironment.objects.filter(
            namespace__in=ids, owns_namespace=True, ended_at__isnull=True
        ).values_list("namespace_id", "expires_at")
    )
    return {
        pk: {
            "tenant": tenant,
            "name": name,
            "cluster": cluster,
            "tier": tier,
            "ephemeral": ephemeral,
            "project": project or "",
            "state": state,
            "expires_at": expiring.get(pk, expires_at),
            "unpriced": False,
        }
        for pk, tenant, name, cluster, tier, ephemeral, project, state, expires_at in (
            Namespace.objects.filter(pk__in=ids).values_list(
                "pk",
                "tenant_id",
                "name",
                "cluster__name",
                "tier__slug",
                "tier__is_ephemeral",
                "project__name",
                "state",
                "expires_at",
            )
        )
    }


def _closed(first: date, tenants: list[Tenant] | None) -> MonthPieces:
    """A closed month's rows as pieces, what they say of each namespace, and the
    adjustments per tenant."""
    pieces, info = [], {}
    adjustments: dict[int, list[Adjustment]] = {}
    rows = MonthlyCharge.objects.filter(month=first).select_related("namespace", "created_by")
    if tenants is not None:
        rows = rows.filter(tenant__in=tenants)
    for row in rows:
        if row.kind == ChargeKind.ADJUSTMENT:
            adjustments.setdefault(row.tenant_id, []).append(
                Adjustment(
                    amount=row.cost,
                    currency=row.currency,
                    note=row.note,
                    namespace=row.namespace_name,
                    added_at=row.created_at,
                    added_by=str(row.created_by or ""),
                )
            )
            continue
        key = row.namespace_id or -row.pk
        info.setdefault(
            key,
            {
                "tenant": row.tenant_id,
                "name": row.namespace_name,
                "cluster": row.cluster_name,
                "tier": row.tier_slug,
                "ephemeral": row.ephemeral,
                "project": row.project_name,
                "state": row.namespace.state if row.namespace else NamespaceState.DECOMMISSIONED,
                "expires_at": None,
                "unpriced": False,
            },
        )
        pieces.append(
            charging.Piece(
                namespace=key,
                cluster=0,
                cpu_millis=row.cpu_millis,
                memory_mib=row.memory_mib,
                storage_gib=row.storage_gib,
                currency=row.currency,
                prices=tuple(getattr(row, name) for name in PRICE_FIELDS),
                start=row.charged_from,
                end=row.charged_until,
            )
        )
    return MonthPieces(first=first, closed=True, pieces=pieces, about=info, adjustments=adjustments)
