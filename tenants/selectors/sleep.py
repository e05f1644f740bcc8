"""A namespace's sleep as people and the provisioner read it: the schedule that holds for
it, whether it should be asleep at a moment (the schedule, unless a wake on demand is in
force), what the cluster holds, and when that changes next."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from tenants.models import Namespace
from tenants.sleep_schedules import Schedule


@dataclass(frozen=True)
class SleepStatus:
    schedule: Schedule | None
    wants_asleep: bool  # what Berth makes of it now
    asleep: bool  # what its cluster holds, as last recorded
    awake_until: datetime | None  # a wake on demand in force, until then
    next_change: datetime | None
    by_kube_green: bool

    @property
    def label(self) -> str:
        if self.schedule is None:
            return "never sleeps"
        return "asleep" if self.asleep else "awake"


def sleep_status(namespace: Namespace, at: datetime | None = None) -> SleepStatus:
    """Select `tier` and `cluster` with the namespace."""
    at = at or timezone.now()
    schedule = namespace.schedule()
    woken = namespace.awake_until if namespace.awake_until and namespace.awake_until > at else None
    if schedule is None:
        return SleepStatus(
            None, False, namespace.asleep, None, None, namespace.cluster.has_kube_green
        )
    changes = [moment for moment in (schedule.next_change(at), woken) if moment is not None]
    return SleepStatus(
        schedule=schedule,
        wants_asleep=schedule.asleep_at(at) and woken is None,
        asleep=namespace.asleep,
        awake_until=woken,
        next_change=min(changes) if changes else None,
        by_kube_green=namespace.cluster.has_kube_green,
    )


def wake_end(namespace: Namespace, *, hours: int | None, at: datetime | None = None) -> datetime:
    """Until when a wake asked now lasts: the hours asked (at most the tier's), and never
    past the schedule's next sleep. With kube-green, which sleeps on its own clock, until
    that next sleep."""
    at = at or timezone.now()
    schedule = namespace.schedule()
    assert schedule is not None
    next_sleep = schedule.next_sleep(at)
    if namespace.cluster.has_kube_green and next_sleep is not None:
        return next_sleep
    longest = namespace.tier.wake_max_hours
    until = at + timedelta(hours=min(hours or longest, longest))
    return min(until, next_sleep) if next_sleep else until
