"""A namespace's sleep as plans take it (provisioning.plan.SleepSpec): read from its live
records and its tier as it stands (a schedule is a policy, not a pinned definition), and
what its cluster carries it out with."""

from __future__ import annotations

from datetime import datetime

from provisioning.plan import SleepSpec
from tenants.models import Namespace
from tenants.selectors.sleep import sleep_status


def sleep_spec(namespace: Namespace, at: datetime | None = None) -> SleepSpec | None:
    """Select `tier` and `cluster` with the namespace."""
    status = sleep_status(namespace, at)
    if not status.sleeps:
        return None
    schedule = status.schedule  # None: it sleeps when idle, by Berth alone
    return SleepSpec(
        weekdays=schedule.weekdays if schedule else "",
        sleep_at=schedule.hhmm(schedule.sleep_at) if schedule else "",
        wake_at=schedule.hhmm(schedule.wake_at) if schedule else "",
        time_zone=schedule.time_zone if schedule else "",
        kube_green=status.by_kube_green,
        asleep=status.wants_asleep,
        next_change=status.next_change.isoformat() if status.next_change else "",
    )
