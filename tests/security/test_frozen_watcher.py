"""A watcher that stops beating loses its cluster. On PostgreSQL the cluster's watcher holds
an advisory lock for as long as its database session lives; a watcher frozen by SIGSTOP
(or a hung host) keeps that session open, so nobody could take over and drift waited for
beat's periodic reconcile. Here the frozen holder is a database session of its own that
took the lock and the lease as a watcher does and then never beats again: the replacement
ends that session once the lease lapses, takes the cluster over, and records drift; /readyz
fails from the moment the lease lapses until the replacement beats."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from provisioning.jobs.watch_lock import ADVISORY_CLASS
from provisioning.models import ClusterWatch
from tests.support.cluster import shared_stand_in
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
