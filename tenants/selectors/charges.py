"""Where a month's charges come from: the rows a closed month was counted into, or for an
open one the allocations and price lists priced by tenants.charging. Every showback page,
the closing of a month and the FOCUS export read a month through `month_pieces`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from tenants import charging
from tenants.choices import ChargeKind, NamespaceState
from tenants.models import (
    Allocation,
    ClosedMonth,
    ClusterPrice,
    EphemeralEnvironment,
    MonthlyCharge,
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
    return months_pieces([first], now, tenants=tenants)[0]


def months_pieces(
    firsts: list[date], now: datetime | None = None, *, tenants: list[Tenant] | None = None
) -> list[MonthPieces]:
    """month_pieces of each of `firsts`, in a fixed number of queries however many months
    and namespaces (each reading plain values: 10,000 namespaces are tens of thousands of
    rows)."""
    now = now or timezone.now()
    closed = set(ClosedMonth.objects.filter(month__in=firsts).values_list("month", flat=True))
    found = _closed([first for first in firsts if first in closed], tenants)
    still_open = [first for first in firsts if first not in closed]
    if still_open:
        windows = {first: month_window(first, now) for first in still_open}
        held, about, lists = _history(
            min(start for start, _ in windows.values()),
            max(end for _, end in windows.values()),
            tenants,
        )
        for first, (start, end) in windows.items():
            found[first] = MonthPieces(
                first=first,
                closed=False,
                pieces=charging.pieces(held, lists, start=start, end=end),
                about=about,
            )
    return [found[first] for first in firsts]


def _history(start: datetime, end: datetime, tenants: list[Tenant] | None):
    """The allocations held between `start` and `end`, what each namespace is, and the
    price lists."""
    lists = price_lists()
    priced = {each.cluster for each in lists}
    held, about = [], {}
    moment = Moments()
    for row in _overlapping(start, end, tenants).values_list(*HELD, *ABOUT):
        held.append(charging.Held(*row[:5], moment[row[5]], moment[row[6]], row[7]))
        if row[0] not in about:
            about[row[0]] = dict(zip(ABOUT_KEYS, row[8:], strict=True))
            about[row[0]]["project"] = about[row[0]]["project"] or ""
            about[row[0]]["unpriced"] = row[1] not in priced
    environments = EphemeralEnvironment.objects.filter(owns_namespace=True, ended_at__isnull=True)
    if tenants is not None:
        environments = environments.filter(tenant__in=tenants)
    for namespace, expires_at in environments.values_list("namespace_id", "expires_at"):
        if namespace in about:  # an environment's own namespace lives until it expires
            about[namespace]["expires_at"] = expires_at
    return held, about, lists


# What an allocation is priced from (tenants.charging.Held), and what its namespace's rows
# show of it.
HELD = ("namespace_id", "cluster_id", "cpu_millis", "memory_mib", "storage_gib")
HELD += ("started_text", "ended_text", "asleep")
ABOUT_KEYS = ("tenant", "name", "cluster", "tier", "ephemeral", "project", "state", "expires_at")
ABOUT = ("tenant_id", "namespace__name", "cluster__name", "namespace__tier__slug")
ABOUT += ("namespace__tier__is_ephemeral", "namespace__project__name", "namespace__state")
ABOUT += ("namespace__expires_at",)


def _overlapping(start: datetime, end: datetime, tenants: list[Tenant] | None):
    allocations = Allocation.objects.filter(started_at__lt=end).filter(
        Q(ended_at__isnull=True) | Q(ended_at__gt=start)
    )
    if tenants is not None:
        allocations = allocations.filter(tenant__in=tenants)
    return allocations.order_by().annotate(
        started_text=as_text("started_at"), ended_text=as_text("ended_at")
    )


def as_text(column: str) -> Cast:
    """A stored moment as the database writes it (read back through Moments)."""
    return Cast(column, output_field=TextField())


class Moments(dict):
    """The text of a stored moment → its datetime, each distinct one parsed once: a month's
    rows repeat a few dozen moments tens of thousands of times, and the driver would parse
    every one again (on 10,000 namespaces, two thirds of reading a closed month)."""

    def __missing__(self, text: str | None) -> datetime | None:
        moment = None if text is None else datetime.fromisoformat(text)
        if moment is not None and moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)  # SQLite keeps UTC without its offset
        self[text] = moment
        return moment


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
    moment = Moments()
    return [
        charging.Held(*row[:5], moment[row[5]], moment[row[6]], row[7])
        for row in _overlapping(start, end, tenants).values_list(*HELD)
    ]


def _closed(firsts: list[date], tenants: list[Tenant] | None) -> dict[date, MonthPieces]:
    """Closed months' rows as pieces, what they say of each namespace, and the adjustments
    per tenant: two queries for any number of months."""
    found = {first: MonthPieces(first=first, closed=True) for first in firsts}
    if not firsts:
        return found
    rows = MonthlyCharge.objects.filter(month__in=firsts).order_by()
    if tenants is not None:
        rows = rows.filter(tenant__in=tenants)
    charged = rows.filter(kind=ChargeKind.CHARGE).annotate(
        from_text=as_text("charged_from"),
        until_text=as_text("charged_until"),
        **{f"{name}_text": as_text(name) for name in PRICE_FIELDS},
    )
    moment = Moments()
    # The text of a price list → its prices, each made once and shared by the rows that
    # repeat it (hashing text is cheap, hashing decimals is not).
    price_lists: dict[tuple[str, ...], tuple[Decimal, ...]] = {}
    for row in charged.values_list(*CHARGED):
        pk, namespace, tenant, name, cluster, tier, ephemeral, project, state, currency = row[:10]
        charged_from, charged_until, first, asleep = row[_PRICES.stop :]
        month = found[first]
        key = namespace or -pk  # a namespace no longer recorded: a key of its own
        if key not in month.about:
            month.about[key] = {
                "tenant": tenant,
                "name": name,
                "cluster": cluster,
                "tier": tier,
                "ephemeral": ephemeral,
                "project": project,
                "state": state or NamespaceState.DECOMMISSIONED,
                "expires_at": None,
                "unpriced": False,
            }
        texts = row[_PRICES]
        prices = price_lists.get(texts)
        if prices is None:
            prices = price_lists[texts] = tuple(Decimal(text) for text in texts)
        month.pieces.append(
            charging.Piece(
                namespace=key,
                cluster=0,
                cpu_millis=row[10],
                memory_mib=row[11],
                storage_gib=row[12],
                currency=currency,
                prices=prices,
                start=moment[charged_from],
                end=moment[charged_until],
                asleep=asleep,
            )
        )
    for row in rows.filter(kind=ChargeKind.ADJUSTMENT).select_related("created_by"):
        found[row.month].adjustments.setdefault(row.tenant_id, []).append(
            Adjustment(
                amount=row.cost,
                currency=row.currency,
                note=row.note,
                namespace=row.namespace_name,
                added_at=row.created_at,
                added_by=str(row.created_by or ""),
            )
        )
    return found


CHARGED = ("pk", "namespace_id", "tenant_id", "namespace_name", "cluster_name", "tier_slug")
CHARGED += ("ephemeral", "project_name", "namespace__state", "currency")
CHARGED += ("cpu_millis", "memory_mib", "storage_gib")
_PRICES = slice(len(CHARGED), len(CHARGED) + len(PRICE_FIELDS))
CHARGED += tuple(f"{name}_text" for name in PRICE_FIELDS)
CHARGED += ("from_text", "until_text", "month", "asleep")
