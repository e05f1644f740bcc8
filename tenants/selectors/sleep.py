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
    by_kube_green: bool  # kube-green carries its schedule out (Berth does idle sleep)
    idle_hours: int | None = None  # sleeps after this long without a deploy

    @property
    def sleeps(self) -> bool:
        return self.schedule is not None or self.idle_hours is not None

    @property
    def label(self) -> str:
        if not self.sleeps:
            return "never sleeps"
        return "asleep" if self.asleep else "awake"


def idle_from(namespace: Namespace) -> datetime:
    """Since when a namespace of an idle-sleeping tier has been idle: its last deploy, else
    its making."""
    return max(filter(None, (namespace.created_at, namespace.last_deploy_at)))


def sleep_status(namespace: Namespace, at: datetime | None = None) -> SleepStatus:
    """Select `tier` and `cluster` with the namespace."""
    at = at or timezone.now()
    schedule = namespace.schedule()
    idle_hours = namespace.idle_sleep_hours()
    woken = namespace.awake_until if namespace.awake_until and namespace.awake_until > at else None
    if schedule is None and idle_hours is None:
        return SleepStatus(None, False, namespace.asleep, None, None, False)
    wanted, changes = False, [woken]
    if schedule is not None:
        wanted = schedule.asleep_at(at)
        changes.append(schedule.next_change(at))
    if idle_hours is not None:
        idle_at = idle_from(namespace) + timedelta(hours=idle_hours)
        wanted = wanted or idle_at <= at
        changes.append(idle_at if idle_at > at else None)
    upcoming = [moment for moment in changes if moment is not None]
    return SleepStatus(
        schedule=schedule,
        wants_asleep=wanted and woken is None,
        asleep=namespace.asleep,
        awake_until=woken,
        next_change=min(upcoming) if upcoming else None,
        by_kube_green=schedule is not None and namespace.cluster.has_kube_green,
        idle_hours=idle_hours,
    )


def wake_end(namespace: Namespace, *, hours: int | None, at: datetime | None = None) -> datetime:
    """Until when a wake asked now lasts: the hours asked (at most the tier's), and never
    past the schedule's next sleep. With kube-green, which sleeps on its own clock, until
    that next sleep. (An idle namespace sleeps again at the wake's end, unless deployed to.)"""
    at = at or timezone.now()
    schedule = namespace.schedule()
    next_sleep = schedule.next_sleep(at) if schedule is not None else None
    if namespace.cluster.has_kube_green and next_sleep is not None:
        return next_sleep
    longest = namespace.tier.wake_max_hours
    until = at + timedelta(hours=min(hours or longest, longest))
    return min(until, next_sleep) if next_sleep else until
