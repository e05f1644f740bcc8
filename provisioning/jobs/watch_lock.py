"""The cluster's one watcher across every replica: a PostgreSQL advisory lock where the
database is PostgreSQL, else a lease row (ClusterWatch) that must be renewed; and the
clusters a watcher that beat recently covers (/readyz and beat's reconcile ask)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import DatabaseError, connection
from django.utils import timezone

from provisioning.jobs.watch_streams import Timing
from provisioning.models import ClusterWatch
from provisioning.records import watch_leases

logger = logging.getLogger(__name__)

ADVISORY_CLASS = 0x6265  # "be": the first key of the two-key advisory lock, the cluster's id second


class Lock:
    """The cluster's one watcher: a PostgreSQL advisory lock (held by this thread's database
    session), else a lease row that must be renewed."""

    def __init__(self, cluster_id: int, holder: str, timing: Timing) -> None:
        self.cluster_id, self.holder, self.timing = cluster_id, holder, timing
        self.advisory = connection.vendor == "postgresql"

    def take(self) -> bool:
        if self.advisory:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", [ADVISORY_CLASS, self.cluster_id]
                )
                if not cursor.fetchone()[0]:
                    return False
        return watch_leases.take_watch_lease(
            cluster_id=self.cluster_id,
            holder=self.holder,
            seconds=self.timing.lease_seconds,
            force=self.advisory,
        )

    def take_or_wait(self) -> bool:
        """`take`, where a database that did not answer this time (a locked SQLite file, a
        dropped connection) counts as not taken: the watcher asks again at its next beat
        instead of dying."""
        try:
            return self.take()
        except DatabaseError as error:
            logger.warning(
                "cluster %s: the lock could not be asked for: %s", self.cluster_id, error
            )
            connection.close()
            return False

    def still_held(self) -> bool:
        if not self.advisory:
            return True  # the heartbeat's conditional update says
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                "pid = pg_backend_pid() AND classid = %s AND objid = %s",
                [ADVISORY_CLASS, self.cluster_id],
            )
            return cursor.fetchone()[0] > 0

    def release(self) -> None:
        watch_leases.release_watch_lease(cluster_id=self.cluster_id, holder=self.holder)
        if self.advisory:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock(%s, %s)", [ADVISORY_CLASS, self.cluster_id]
                )


def watched_clusters(*, within_seconds: float | None = None) -> set[int]:
    """Clusters whose watcher beat recently: their drift is already seen as it happens."""
    seconds = Timing().lease_seconds if within_seconds is None else within_seconds
    since = timezone.now() - timedelta(seconds=seconds)
    return set(
        ClusterWatch.objects.filter(
            heartbeat_at__gte=since, lease_expires_at__gte=timezone.now()
        ).values_list("cluster_id", flat=True)
    )
