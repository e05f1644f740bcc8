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
    schedule = status.schedule
    if schedule is None:
        return None
    return SleepSpec(
        weekdays=schedule.weekdays,
        sleep_at=schedule.hhmm(schedule.sleep_at),
        wake_at=schedule.hhmm(schedule.wake_at),
        time_zone=schedule.time_zone,
        kube_green=status.by_kube_green,
        asleep=status.wants_asleep,
        next_change=status.next_change.isoformat() if status.next_change else "",
    )
