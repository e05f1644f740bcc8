"""The cluster watcher's lease and heartbeat (jobs.watch): one holder per cluster, its
figures growing with each beat."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from provisioning.models import ClusterWatch


def take_watch_lease(*, cluster_id: int, holder: str, seconds: float, force: bool = False) -> bool:
    """The cluster's watch lease, if free, lapsed or already this holder's (or `force`: the
    caller holds the database's advisory lock): True when held."""
    now = timezone.now()
    # another replica may make the row first
    with contextlib.suppress(IntegrityError), transaction.atomic():
        ClusterWatch.objects.get_or_create(cluster_id=cluster_id)
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(holder=holder)
    return (
        ClusterWatch.objects.filter(cluster_id=cluster_id)
        .filter(Q() if force else free)
        .update(holder=holder, lease_expires_at=now + timedelta(seconds=seconds), heartbeat_at=now)
        == 1
    )


def watch_lease_lapsed(*, cluster_id: int, seconds: float) -> bool:
    """The cluster's lease ran out without a renewal (or was never written, and nobody beat
    within `seconds`): its holder, if any, stopped beating."""
    now = timezone.now()
    lapsed = Q(lease_expires_at__lt=now) | Q(
        lease_expires_at__isnull=True, heartbeat_at__lt=now - timedelta(seconds=seconds)
    )
    return ClusterWatch.objects.filter(cluster_id=cluster_id).filter(lapsed).exists()


def release_watch_lease(*, cluster_id: int, holder: str) -> None:
    ClusterWatch.objects.filter(cluster_id=cluster_id, holder=holder).update(lease_expires_at=None)


def watch_heartbeat(
    *,
    cluster_id: int,
    holder: str,
    seconds: float,
    events: int = 0,
    relists: int = 0,
    restarts: int = 0,
    lag_seconds: float | None = None,
) -> bool:
    """The holder is alive: its lease runs `seconds` more and its figures grow by what it
    did since the last beat. False when another holder has the cluster now."""
    changes: dict[str, Any] = {
        "heartbeat_at": timezone.now(),
        "lease_expires_at": timezone.now() + timedelta(seconds=seconds),
        "events": F("events") + events,
        "relists": F("relists") + relists,
        "restarts": F("restarts") + restarts,
    }
    if lag_seconds is not None:
        changes["lag_seconds"] = lag_seconds
    return ClusterWatch.objects.filter(cluster_id=cluster_id, holder=holder).update(**changes) == 1
