"""The cluster watcher run in a test: a quick timing, a watcher thread, polling for what it
records (tests/provisioning/jobs/test_watch*.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import OperationalError

from provisioning.jobs.watch_streams import WATCHED_KINDS, Timing
from provisioning.jobs.watch_supervisor import watch_clusters
from provisioning.models import ClusterWatch
from tenants.models import Cluster, Namespace
from tests.support.jobs_engine import approved
from tests.support.prov_world import demo_world
from tests.support.snapshots import built_once
from tests.support.workflow import converge

QUICK = Timing(
    watch_seconds=1,
    heartbeat_seconds=0.1,
    lease_seconds=1.5,
    refresh_seconds=0.5,
    backoff_initial=0.05,
    backoff_max=0.3,
)
DEADLINE = 30.0


def watched_world(sandbox) -> dict[str, Any]:
    """The demo's shop provisioned on dev (with storage), with no drift yet; built once per
    test process."""
    built_once(
        ("watched", sandbox.url), lambda: converge(approved(demo_world(sandbox))), sandbox=sandbox
    )
    namespace = Namespace.objects.get(name="payments-shop-dev")
    assert namespace.state == "active" and namespace.drift == []
    return {"namespace": namespace, "cluster": Cluster.objects.get(name="sandbox")}


def repairing(namespace: Namespace, repair: bool) -> None:
    namespace.tier.auto_repair_drift = repair
    namespace.tier.save(update_fields=["auto_repair_drift"])


@contextmanager
def watcher(holder: str = "replica-a", timing: Timing = QUICK) -> Iterator[threading.Event]:
    stop = threading.Event()
    thread = threading.Thread(
        target=watch_clusters,
        daemon=True,
        kwargs={"holder": holder, "stop": stop, "timing": timing},
    )
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(timeout=15)


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll the database (or the stand-in) until `check` answers, within a generous deadline."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            found = check()
        except OperationalError as error:
            # SQLite's in-memory database, shared between this thread and the watcher's,
            # locks a table while the other writes it: read again (PostgreSQL never does).
            if "locked" not in str(error):
                raise
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def synced(cluster: Cluster) -> None:
    """The holder has listed every kind (and beaten since)."""
    eventually(
        lambda: ClusterWatch.objects.filter(
            cluster=cluster, relists__gte=len(WATCHED_KINDS)
        ).exists(),
        "every kind listed",
    )


def finding(namespace: Namespace, obj: str) -> dict | None:
    namespace.refresh_from_db()
    return next((f for f in namespace.drift if f["object"] == obj), None)
