"""Used against allocated, pure: the instants a day's range queries are evaluated at, a
namespace's averages over the hours it held quota that day, and a month's allocated, used
and idle core-hours and GiB-hours with what the idle part cost. No database:
tenants.services.usage_history collects the days (tenants.models.UsageDay),
tenants.selectors.usage_history reads them beside a month's pieces (tenants.charging).

A sample at instant t covers the step before it (CPU is a rate over the step), so a day from
midnight to midnight is sampled at midnight + step, + 2 steps, ... up to the next midnight:
every second of the day counted once. An instant at which the endpoint has no sample for a
namespace that held quota counts as nothing used: no container of it ran.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from tenants.charging import Piece, hours_between

STEP_RANGE = (60, 3600)  # seconds: at least a few scrapes a step, at least 24 samples a day


def instants(start: datetime, end: datetime, step: int) -> list[datetime]:
    """The instants a range query from `start` + `step` to `end` is evaluated at, as
    Prometheus evaluates it (the first, then every `step`, up to and including `end`)."""
    found = []
    at = start + timedelta(seconds=step)
    while at <= end:
        found.append(at)
        at += timedelta(seconds=step)
    return found


@dataclass(frozen=True)
class DayAverage:
    cpu_cores: float
    memory_gib: float
    samples: int  # instants with a sample of either figure


def day_average(
    held: Iterable[tuple[datetime, datetime]],
    at: list[datetime],
    cpu: Iterable[tuple[float, float]],
    memory: Iterable[tuple[float, float]],
) -> DayAverage | None:
    """A namespace's average CPU cores and GiB over the instants `at` that fall in the
    stretches it `held` quota (an instant belongs to a stretch when the step before it
    ends there: start < t <= end); None when none does. `cpu` and `memory` are its samples,
    (unix seconds, value)."""
    stretches = list(held)
    counted = [t for t in at if any(start < t <= end for start, end in stretches)]
    if not counted:
        return None
    cpu_at, memory_at = _by_second(cpu), _by_second(memory)
    seconds = [round(t.timestamp()) for t in counted]
    return DayAverage(
        cpu_cores=sum(cpu_at.get(s, 0.0) for s in seconds) / len(seconds),
        memory_gib=sum(memory_at.get(s, 0.0) for s in seconds) / len(seconds),
        samples=sum(1 for s in seconds if s in cpu_at or s in memory_at),
    )


def _by_second(samples: Iterable[tuple[float, float]]) -> dict[int, float]:
    return {round(at): value for at, value in samples}


@dataclass
class Quantity:
    """One resource over a month, in core-hours or GiB-hours: held, held on the hours
    measured, used then, and idle then (held and not used, namespace by namespace and day by
    day, so one namespace using more than it holds does not make another's idle quota
    used)."""

    allocated: float = 0.0
    measured: float = 0.0
    used: float = 0.0
    idle: float = 0.0


@dataclass
class MonthUsage:
    """A month of pieces against the days measured: quantities and the cost split into the
    CPU and memory used, the CPU and memory idle, and the rest (storage, the namespace
    itself, and everything on hours without a measurement)."""

    cost: Decimal = Decimal(0)
    cpu: Quantity = field(default_factory=Quantity)
    memory: Quantity = field(default_factory=Quantity)
    hours: Decimal = Decimal(0)  # namespace-hours held
    measured_hours: Decimal = Decimal(0)  # of which on days measured
    measured_cost: Decimal = Decimal(0)  # the CPU and memory part of the cost on those hours
    idle_cost: Decimal = Decimal(0)

    @property
    def measured(self) -> bool:
        return self.measured_hours > 0

    @property
    def measured_share(self) -> float:
        return float(self.measured_hours / self.hours) if self.hours else 0.0

    @property
    def used_cost(self) -> Decimal:
        return self.measured_cost - self.idle_cost

    @property
    def unmeasured_cost(self) -> Decimal:
        return self.cost - self.measured_cost

    def add(
        self,
        piece: Piece,
        days: list[tuple[date, datetime, datetime]],
        used: dict[date, tuple[float, float]],
    ) -> None:
        """Count `piece` day by day; `used` is its namespace's (CPU cores, GiB) average on
        each day measured."""
        exact_cores, exact_gib = Decimal(piece.cpu_millis) / 1000, Decimal(piece.memory_mib) / 1024
        cores, gib = float(exact_cores), float(exact_gib)
        cpu_price, memory_price = piece.compute_prices  # the asleep prices while asleep
        self.cost += piece.cost
        for day, day_start, day_end in days:
            if day_end <= piece.start or day_start >= piece.end:
                continue
            hours = hours_between(max(day_start, piece.start), min(day_end, piece.end))
            self.hours += hours
            self.cpu.allocated += cores * float(hours)
            self.memory.allocated += gib * float(hours)
            if day not in used:
                continue
            used_cores, used_gib = used[day]
            idle_cores, idle_gib = max(cores - used_cores, 0.0), max(gib - used_gib, 0.0)
            self.measured_hours += hours
            self.measured_cost += hours * (exact_cores * cpu_price + exact_gib * memory_price)
            self.idle_cost += hours * (
                max(exact_cores - _decimal(used_cores), Decimal(0)) * cpu_price
                + max(exact_gib - _decimal(used_gib), Decimal(0)) * memory_price
            )
            for quantity, held, using, idle in (
                (self.cpu, cores, used_cores, idle_cores),
                (self.memory, gib, used_gib, idle_gib),
            ):
                quantity.measured += held * float(hours)
                quantity.used += using * float(hours)
                quantity.idle += idle * float(hours)


def _decimal(value: float) -> Decimal:
    return Decimal(repr(value))
