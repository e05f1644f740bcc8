"""Showback's usage history: what each namespace used, day by day, measured by the
Prometheus-compatible endpoint (BERTH_PROMETHEUS_URL) through range queries over the day at
a fixed step (BERTH_USAGE_STEP_SECONDS), averaged over the hours the namespace held quota
that day (tenants.usage_history) and kept in tenants.models.UsageDay. Beat collects
yesterday shortly after midnight, and any of the week before it that is missing.

A day is collected whole or not at all: when the endpoint is not configured, refused by the
egress policy, or does not answer as Prometheus does, nothing is stored and the outcome
says why. Collecting a day again replaces what was stored for it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from tenants import usage, usage_history
from tenants.egress import EgressRefused
from tenants.models import Namespace, UsageDay
from tenants.selectors.charges import held_between, midnight

logger = logging.getLogger(__name__)
# Prometheus keeps 15 days by default: a week of catching up stays well inside that.
CATCH_UP_DAYS = 7


@dataclass(frozen=True)
class Collection:
    """What collecting `day` came to: rows stored, or the problem that stored none."""

    day: date
    stored: int = 0
    problem: str = ""


def collect_usage(*, day: date) -> Collection:
    """Measure `day` for every namespace that held quota during it and store one row each
    (replacing the day's rows). Nothing is stored when the endpoint fails."""
    base = usage.endpoint()
    if not base:
        return Collection(day, problem="no endpoint is configured (BERTH_PROMETHEUS_URL)")
    step = int(getattr(settings, "BERTH_USAGE_STEP_SECONDS", 300))
    low, high = usage_history.STEP_RANGE
    if not low <= step <= high:
        return _failed(day, f"BERTH_USAGE_STEP_SECONDS is {step}: give {low} to {high} seconds")
    start, end = midnight(day), midnight(day + timedelta(days=1))
    held: dict[int, list] = {}
    for each in held_between(start, end):
        held.setdefault(each.namespace, []).append(
            (max(each.start, start), min(each.end or end, end))
        )
    names = dict(Namespace.objects.filter(pk__in=list(held)).values_list("pk", "name"))
    if not names:
        return Collection(day)
    at = usage_history.instants(start, end, step)
    try:
        series = usage.usage_over(base, names.values(), start=at[0], end=at[-1], step=step)
    except (usage.UsageUnavailable, EgressRefused) as exc:
        return _failed(day, getattr(exc, "message", None) or str(exc))
    rows = []
    for pk, name in names.items():
        average = usage_history.day_average(
            held[pk], at, series["cpu_cores"].get(name, ()), series["memory_gib"].get(name, ())
        )
        if average is not None:
            rows.append(
                UsageDay(
                    namespace_id=pk,
                    day=day,
                    cpu_cores=average.cpu_cores,
                    memory_gib=average.memory_gib,
                    samples=average.samples,
                )
            )
    with transaction.atomic():
        UsageDay.objects.filter(day=day).delete()
        UsageDay.objects.bulk_create(rows)
    return Collection(day, stored=len(rows))


def collect_recent_usage(
    *, today: date | None = None, days: int = CATCH_UP_DAYS
) -> list[Collection]:
    """Each of the `days` before today that has no row yet: yesterday, and any day the
    endpoint failed or beat did not run. Nothing when no endpoint is configured."""
    if not usage.endpoint():
        return []
    today = today or timezone.localdate()
    wanted = [today - timedelta(days=back) for back in range(1, days + 1)]
    done = set(UsageDay.objects.filter(day__in=wanted).values_list("day", flat=True).distinct())
    return [collect_usage(day=day) for day in sorted(wanted) if day not in done]


def _failed(day: date, problem: str) -> Collection:
    logger.warning("usage of %s not collected: %s", day.isoformat(), problem)
    return Collection(day, problem=problem)
