"""A watcher that stops beating loses its cluster. On PostgreSQL the cluster's watcher holds
an advisory lock for as long as its database session lives; a watcher frozen by SIGSTOP
(or a hung host) keeps that session open, so nobody could take over and drift waited for
beat's periodic reconcile. Here the frozen holder is a database session of its own that
took the lock and the lease as a watcher does and then never beats again: the replacement
ends that session once the lease lapses, takes the cluster over, and records drift; /readyz
fails from the moment the lease lapses until the replacement beats. One test freezes a real
`manage.py watch_clusters` process with SIGSTOP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from provisioning.jobs.watch_lock import ADVISORY_CLASS
from provisioning.models import ClusterWatch
from tests.support.cluster import shared_stand_in
from tests.support.integration import ROOT, worker_env
from tests.support.process_groups import stop_group
from tests.support.watching import QUICK, eventually, finding, repairing, synced, watched_world
from tests.support.watching import watcher as running_watcher

QUOTA = "ResourceQuota/payments-shop-dev/berth-quota"


@pytest.fixture
def postgres_world(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip(
            "the advisory lock a frozen watcher keeps is PostgreSQL's (set DATABASE_URL); "
            "on SQLite the lease row alone decides, and a lapsed lease is taken over already"
        )
    sandbox = shared_stand_in(termination_seconds=0.05)
    return sandbox, watched_world(sandbox)


def frozen_holder(cluster_id: int) -> psycopg.Connection:
    """A session that takes the cluster's lock and lease as a watcher does, then stops."""
    params = connection.get_connection_params()
    session = psycopg.connect(
        **{k: v for k, v in params.items() if k in ("dbname", "user", "host", "port", "password")},
        autocommit=True,
    )
    locked = session.execute(
        "SELECT pg_try_advisory_lock(%s, %s)", [ADVISORY_CLASS, cluster_id]
    ).fetchone()[0]
    assert locked
    ClusterWatch.objects.update_or_create(
        cluster_id=cluster_id,
        defaults={
            "holder": "frozen",
            "heartbeat_at": timezone.now(),
            "lease_expires_at": timezone.now() + timedelta(seconds=QUICK.lease_seconds),
        },
    )
    return session


def test_a_frozen_watcher_is_replaced_within_the_lease_and_drift_is_caught(postgres_world):
    sandbox, world = postgres_world
    namespace, cluster = world["namespace"], world["cluster"]
    repairing(namespace, False)
    frozen = frozen_holder(cluster.pk)

    with running_watcher("replica-b"):
        eventually(
            lambda: ClusterWatch.objects.get(cluster=cluster).holder == "replica-b",
            "replica-b takes the cluster over from the frozen holder",
        )
        synced(cluster)
        quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
        quota["spec"]["hard"]["requests.cpu"] = "64"
        sandbox.upsert(quota)

        eventually(lambda: finding(namespace, QUOTA), "the edit recorded by the replacement")

    # The frozen session was ended: woken, it can do nothing more as the watcher.
    with pytest.raises(psycopg.OperationalError):
        frozen.execute("SELECT 1")


def test_a_live_holder_is_not_ended(postgres_world):
    """Only a lapsed lease ends a session: a holder that beats keeps the cluster."""
    sandbox, world = postgres_world
    cluster = world["cluster"]
    with running_watcher("replica-a"):
        synced(cluster)
        with running_watcher("replica-b"):
            synced(cluster)
            assert ClusterWatch.objects.get(cluster=cluster).holder == "replica-a"


def test_readyz_fails_once_the_frozen_holders_lease_lapses_until_its_replacement_beats(
    postgres_world, client
):
    sandbox, world = postgres_world
    cluster = world["cluster"]
    frozen_holder(cluster.pk)

    eventually(lambda: client.get("/readyz").status_code == 503, "not ready once the lease lapses")
    body = client.get("/readyz").json()
    assert body["status"] == "unavailable"
    assert body["checks"]["watcher"]["ok"] is False
    assert (
        "no watcher has beaten within its lease for sandbox" in body["checks"]["watcher"]["error"]
    )

    with running_watcher("replica-b"):
        eventually(
            lambda: client.get("/readyz").status_code == 200, "ready again once replica-b beats"
        )


@pytest.mark.processes  # manage.py watch_clusters, stopped with SIGSTOP
def test_a_sigstopped_watcher_process_is_replaced_and_drift_caught_within_its_lease(
    postgres_world,
):
    """The real thing: `manage.py watch_clusters` holds the cluster, is frozen by SIGSTOP,
    and a replica takes the cluster over once its lease (3 s here) lapses and records drift;
    the frozen process, continued, has lost its database session and the cluster."""
    sandbox, world = postgres_world
    namespace, cluster = world["namespace"], world["cluster"]
    repairing(namespace, False)
    env = {**worker_env(), "BERTH_WATCH_LEASE_SECONDS": "3", "BERTH_WATCH_HEARTBEAT_SECONDS": "0.2"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "watch_clusters"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
    )
    frozen = False
    try:
        holder = f":{process.pid}"
        eventually(
            lambda: ClusterWatch.objects.filter(
                cluster=cluster, holder__endswith=holder, relists__gte=1
            ).exists(),
            "the watcher process holds the cluster",
        )
        backend = lock_holder_session(cluster.pk)
        os.kill(process.pid, signal.SIGSTOP)
        frozen = True

        with running_watcher("replica-b"):
            eventually(
                lambda: ClusterWatch.objects.get(cluster=cluster).holder == "replica-b",
                "replica-b takes the cluster over from the SIGSTOPped process",
            )
            synced(cluster)
            quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
            quota["spec"]["hard"]["requests.cpu"] = "32"
            sandbox.upsert(quota)
            eventually(lambda: finding(namespace, QUOTA), "the edit recorded by the replacement")

            # The frozen process's database session, which held the lock, was ended.
            assert not session_alive(backend)
            os.kill(process.pid, signal.SIGCONT)
            frozen = False
            # Continued, it lives on as a standby: the cluster stays replica-b's.
            beat = ClusterWatch.objects.get(cluster=cluster).heartbeat_at
            eventually(
                lambda: ClusterWatch.objects.get(cluster=cluster).heartbeat_at > beat,
                "replica-b beats on after the old holder continues",
            )
            assert process.poll() is None
            assert ClusterWatch.objects.get(cluster=cluster).holder == "replica-b"
    finally:
        if frozen:
            os.kill(process.pid, signal.SIGCONT)
        stop_group(process, timeout=20)


def lock_holder_session(cluster_id: int) -> int:
    """The database session (backend pid) holding the cluster's advisory lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
            "classid = %s AND objid = %s",
            [ADVISORY_CLASS, cluster_id],
        )
        (pid,) = cursor.fetchone()
        return pid


def session_alive(backend: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend])
        return cursor.fetchone()[0] > 0


def test_a_lease_shorter_than_three_beats_is_refused_before_watching(settings):
    """A holder merely slow for a beat must not lose its cluster: the command says so."""
    settings.BERTH_WATCH_LEASE_SECONDS = 1.0
    settings.BERTH_WATCH_HEARTBEAT_SECONDS = 0.5
    with pytest.raises(CommandError, match="must be at least three beats"):
        call_command("watch_clusters")
