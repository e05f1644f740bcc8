"""Time-weighted showback, pure: what each stretch of a namespace's allocation costs at the
prices in force during it. No database: tenants.selectors.costs reads the allocations and
price lists, closes months with the pieces, and reads closed months back as pieces.

A piece is a stretch of time in which nothing that moves cost changed: one quota (an
allocation) at one set of prices (a price list). Its cost is its hourly price
(tenants.pricing.hourly) times its hours; a namespace's cost in a window is the sum of its
pieces there. Rounded to the cent only when shown.

A namespace asleep (hibernation) holds its quota in allocations of their own (`asleep`):
their CPU and memory are priced at the cluster's asleep prices, storage and the namespace
itself as when awake; what those hours would have cost awake, less what they cost, is what
sleeping saved (`Piece.savings`), unrounded like the cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal

from tenants.pricing import COMPUTE_PRICES, PRICE_FIELDS, hourly

_PRICE_INDEX = {name: index for index, name in enumerate(PRICE_FIELDS)}


# Slots, not frozen: tens of thousands are made for a month at 10,000 namespaces, and a
# frozen dataclass sets each field through object.__setattr__.
@dataclass(slots=True)
class Held:
    """An allocation: `namespace` held this quota from `start` until `end` (None: still),
    asleep or awake."""

    namespace: int
    cluster: int
    cpu_millis: int
    memory_mib: int
    storage_gib: int
    start: datetime
    end: datetime | None
    asleep: bool = False


@dataclass(frozen=True)
class PriceList:
    """A cluster's prices from `start` until `end` (None: until further notice)."""

    cluster: int
    currency: str
    prices: tuple[Decimal, ...]  # in PRICE_FIELDS' order
    start: datetime
    end: datetime | None


@dataclass(slots=True)
class Piece:
    namespace: int
    cluster: int
    cpu_millis: int
    memory_mib: int
    storage_gib: int
    currency: str
    prices: tuple[Decimal, ...]
    start: datetime
    end: datetime
    asleep: bool = False

    @property
    def per_hour(self) -> Decimal:
        return self._hourly(asleep=self.asleep)

    @property
    def awake_per_hour(self) -> Decimal:
        """What the same quota costs an hour awake (the per_hour of a piece awake)."""
        return self._hourly(asleep=False)

    def _hourly(self, *, asleep: bool) -> Decimal:
        return hourly(
            cpu_millis=self.cpu_millis,
            memory_mib=self.memory_mib,
            storage_gib=self.storage_gib,
            prices=dict(zip(PRICE_FIELDS, self.prices, strict=True)),
            asleep=asleep,
        )

    @property
    def compute_prices(self) -> tuple[Decimal, Decimal]:
        """The prices its CPU core-hours and GiB-hours of memory are charged at."""
        cpu, memory = COMPUTE_PRICES[self.asleep]
        return self.prices[_PRICE_INDEX[cpu]], self.prices[_PRICE_INDEX[memory]]

    @property
    def saved_per_hour(self) -> Decimal:
        """What sleeping saves an hour: the awake price less the asleep one (none awake)."""
        return self.awake_per_hour - self.per_hour if self.asleep else Decimal(0)

    @property
    def asleep_hours(self) -> Decimal:
        return self.hours if self.asleep else Decimal(0)

    @property
    def savings(self) -> Decimal:
        """What these hours would have cost awake less what they cost (none awake)."""
        return self.saved_per_hour * self.hours if self.asleep else Decimal(0)

    @property
    def hours(self) -> Decimal:
        return hours_between(self.start, self.end)

    @property
    def cost(self) -> Decimal:
        return self.per_hour * self.hours

    def within(self, start: datetime, end: datetime) -> Piece | None:
        """The part of this piece between `start` and `end`, if any."""
        begins, ends = max(self.start, start), min(self.end, end)
        if begins >= ends:
            return None
        return replace(self, start=begins, end=ends)


def hours_between(start: datetime, end: datetime) -> Decimal:
    seconds = max((end - start).total_seconds(), 0)
    return Decimal(str(seconds)) / 3600


def price_lists(rows: Iterable[tuple[int, str, tuple[Decimal, ...], datetime]]) -> list[PriceList]:
    """(cluster, currency, prices, effective from) rows → price lists, each ending where its
    cluster's next one starts."""
    by_cluster: dict[int, list[tuple[int, str, tuple[Decimal, ...], datetime]]] = {}
    for row in rows:
        by_cluster.setdefault(row[0], []).append(row)
    lists = []
    for versions in by_cluster.values():
        versions.sort(key=lambda row: row[3])
        for index, (cluster, currency, prices, start) in enumerate(versions):
            end = versions[index + 1][3] if index + 1 < len(versions) else None
            lists.append(PriceList(cluster, currency, prices, start, end))
    return lists


def pieces(
    held: Iterable[Held], lists: list[PriceList], *, start: datetime, end: datetime
) -> list[Piece]:
    """Every allocation's stretches between `start` and `end`, split where its cluster's
    prices change. Time before a cluster's first prices is not priced (and not returned)."""
    by_cluster: dict[int, list[PriceList]] = {}
    for price_list in lists:
        by_cluster.setdefault(price_list.cluster, []).append(price_list)
    found = []
    for each in held:
        begins = max(each.start, start)
        ends = min(each.end or end, end)
        if begins >= ends:
            continue
        for price_list in by_cluster.get(each.cluster, ()):
            piece_start = max(begins, price_list.start)
            piece_end = min(ends, price_list.end or ends)
            if piece_start >= piece_end:
                continue
            found.append(
                Piece(
                    namespace=each.namespace,
                    cluster=each.cluster,
                    cpu_millis=each.cpu_millis,
                    memory_mib=each.memory_mib,
                    storage_gib=each.storage_gib,
                    currency=price_list.currency,
                    prices=price_list.prices,
                    start=piece_start,
                    end=piece_end,
                    asleep=each.asleep,
                )
            )
    return found


def days_of(first: date, last: date, zone: tzinfo) -> list[tuple[date, datetime, datetime]]:
    """Each day from `first` to `last` (excluded) with its start and end in `zone` (23 or 25
    hours on the days the clocks change)."""
    days = []
    day = first
    while day < last:
        days.append(
            (
                day,
                datetime.combine(day, datetime.min.time(), tzinfo=zone),
                datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=zone),
            )
        )
        day += timedelta(days=1)
    return days


def by_day(piece: Piece, days: list[tuple[date, datetime, datetime]]) -> dict[date, Decimal]:
    """The piece's cost on each of `days` it overlaps."""
    rate = piece.per_hour
    found = {}
    for day, day_start, day_end in days:
        if day_end <= piece.start or day_start >= piece.end:
            continue
        found[day] = rate * hours_between(max(day_start, piece.start), min(day_end, piece.end))
    return found


def asleep_by_day(
    piece: Piece, days: list[tuple[date, datetime, datetime]]
) -> dict[date, tuple[Decimal, Decimal]]:
    """An asleep piece's hours asleep and what they saved on each of `days` it overlaps
    (nothing for a piece awake)."""
    if not piece.asleep:
        return {}
    saved = piece.saved_per_hour
    found = {}
    for day, day_start, day_end in days:
        if day_end <= piece.start or day_start >= piece.end:
            continue
        hours = hours_between(max(day_start, piece.start), min(day_end, piece.end))
        found[day] = (hours, saved * hours)
    return found
