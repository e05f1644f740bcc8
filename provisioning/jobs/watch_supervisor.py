"""Every cluster Berth applies to, watched from one process: a ClusterWatcher thread per
cluster, started again when it ends (it lost its lock, or its cluster's trouble ended it),
and the process's liveness beat while each of them is alive."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.db import connection

from provisioning.jobs.watch import ClusterWatcher
from provisioning.jobs.watch_streams import Timing
from tenants.models import Cluster


def watch_clusters(
    *,
    holder: str,
    stop: threading.Event,
    timing: Timing | None = None,
    on_beat: Callable[[], None] | None = None,
    cluster_ids: list[int] | None = None,
) -> None:
    """Every cluster Berth applies to, one watcher thread each, until `stop`; a cluster
    whose lock another replica holds is tried again until it is free. `on_beat` is called
    while every watcher of this process is alive (holding and beating, or waiting)."""
    timing = timing or Timing()
    running: dict[int, tuple[ClusterWatcher, threading.Thread]] = {}
    next_look = 0.0
    try:
        while not stop.is_set():
            if time.monotonic() >= next_look:
                next_look = time.monotonic() + timing.refresh_seconds
                wanted = (
                    cluster_ids
                    if cluster_ids is not None
                    else list(Cluster.objects.filter(plan_only=False).values_list("pk", flat=True))
                )
                for cluster_id in wanted:
                    if cluster_id in running and running[cluster_id][1].is_alive():
                        continue
                    watcher = ClusterWatcher(cluster_id, holder=holder, timing=timing)
                    thread = threading.Thread(
                        target=watcher.run, args=(stop,), daemon=True, name=f"cluster-{cluster_id}"
                    )
                    running[cluster_id] = (watcher, thread)
                    thread.start()
            stale = time.monotonic() - timing.lease_seconds
            if on_beat and all(w.alive_at >= stale for w, _ in running.values()):
                on_beat()
            stop.wait(timing.heartbeat_seconds)
    finally:
        connection.close()
        for _, thread in running.values():
            thread.join(timeout=timing.watch_seconds + 5)
