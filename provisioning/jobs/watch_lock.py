"""The cluster's one watcher across every replica: a PostgreSQL advisory lock where the
database is PostgreSQL, else a lease row (ClusterWatch) that must be renewed; and the
clusters a watcher that beat recently covers (/readyz and beat's reconcile ask)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import DatabaseError, connection
from django.utils import timezone

from provisioning.jobs.watch_streams import Figures, Timing
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
        if self.advisory and not (
            self._try_advisory() or (self._end_stalled_holder() and self._try_advisory())
        ):
            return False
        return watch_leases.take_watch_lease(
            cluster_id=self.cluster_id,
            holder=self.holder,
            seconds=self.timing.lease_seconds,
            force=self.advisory,
        )

    def _try_advisory(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [ADVISORY_CLASS, self.cluster_id])
            return bool(cursor.fetchone()[0])

    def _end_stalled_holder(self) -> bool:
        """A holder whose lease lapsed keeps the advisory lock as long as its database
        session lives: a watcher frozen (SIGSTOP, a hung host) keeps its connection open
        and the cluster unwatched for good. Its session is ended (the same database role
        may end its own sessions) so that this watcher takes over; True when one was."""
        if not watch_leases.watch_lease_lapsed(
            cluster_id=self.cluster_id, seconds=self.timing.lease_seconds
        ):
            return False
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
                "classid = %s AND objid = %s AND pid <> pg_backend_pid()",
                [ADVISORY_CLASS, self.cluster_id],
            )
            stalled = [row[0] for row in cursor.fetchall()]
            for pid in stalled:
                logger.warning(
                    "cluster %s: its watcher (database session %s) has not beaten within "
                    "the lease; ending that session to take the cluster over",
                    self.cluster_id,
                    pid,
                )
                # Waits (up to 5 s) until the session is gone and its lock with it.
                cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
        return bool(stalled)

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
        """False when the lock is gone, its database session with it (ended by a watcher
        that took over while this one did not beat)."""
        if not self.advisory:
            return True  # the heartbeat's conditional update says
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                    "pid = pg_backend_pid() AND classid = %s AND objid = %s",
                    [ADVISORY_CLASS, self.cluster_id],
                )
                return cursor.fetchone()[0] > 0
        except DatabaseError:
            connection.close()
            return False

    def beat(self, figures: Figures) -> bool:
        """The lease renewed with the streams' figures; False when the lock is lost. A
        database that did not answer this time (a locked table, a failover) puts the beat
        off with the figures kept: the next beat, or the lease's lapse, decides."""
        # Woken after a freeze past the lease: the lock or lease says if it is still its own.
        if not self.still_held():
            return False
        taken = figures.take()
        try:
            return watch_leases.watch_heartbeat(
                cluster_id=self.cluster_id,
                holder=self.holder,
                seconds=self.timing.lease_seconds,
                **taken,
            )
        except DatabaseError as error:
            figures.put_back(taken)
            logger.warning("cluster %s: heartbeat put off: %s", self.cluster_id, error)
            return True

    def release(self) -> None:
        """Let go of the lease and the lock; a session already ended took the lock with it."""
        try:
            watch_leases.release_watch_lease(cluster_id=self.cluster_id, holder=self.holder)
            if self.advisory:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(%s, %s)", [ADVISORY_CLASS, self.cluster_id]
                    )
        except DatabaseError:
            connection.close()


def watched_clusters(*, within_seconds: float | None = None) -> set[int]:
    """Clusters whose watcher beat recently: their drift is already seen as it happens."""
    seconds = Timing().lease_seconds if within_seconds is None else within_seconds
    since = timezone.now() - timedelta(seconds=seconds)
    return set(
        ClusterWatch.objects.filter(
            heartbeat_at__gte=since, lease_expires_at__gte=timezone.now()
        ).values_list("cluster_id", flat=True)
    )
