"""A watcher starting on a cluster with thousands of namespaces plans each of them before it
compares anything. That first planning must not look like a watcher that went away: its
lease would lapse (another replica would take the cluster) and beat's reconcile would read
every object again. It beats between namespaces."""

from __future__ import annotations

import dataclasses
import time

import pytest
from django.db import OperationalError

from provisioning.jobs.watch import ClusterWatcher
from provisioning.jobs.watch_lock import watched_clusters
from tenants.models import Namespace
from tests.support.watching import (
    QUICK,
    eventually,
    finding,
    repairing,
    synced,
    watched_world,
    watcher,
)

FILLERS = 12


@pytest.fixture
def crowded_watch_world(transactional_db, sandbox):
    crowded_watch_world = watched_world(sandbox)
    shop = crowded_watch_world["namespace"]
    Namespace.objects.bulk_create(
        Namespace(
            name=f"payments-filler{number:02d}-dev",
            tenant=shop.tenant,
            tier=shop.tier,
            cluster=shop.cluster,
            cpu_millis=100,
            memory_mib=128,
            state="active",
        )
        for number in range(FILLERS)
    )
    return crowded_watch_world


def test_a_first_planning_longer_than_the_lease_keeps_the_cluster_watched(
    crowded_watch_world, monkeypatch
):
    cluster = crowded_watch_world["cluster"]
    plan = ClusterWatcher._plan
    seen_watched: list[bool] = []

    def slow_plan(self, name):
        # At first, one namespace's planning stands for a few hundred: three heartbeats
        # long, so the whole first planning lasts about twice the lease.
        if len(seen_watched) <= FILLERS:
            time.sleep(3 * QUICK.heartbeat_seconds)
            seen_watched.append(cluster.pk in watched_clusters(within_seconds=QUICK.lease_seconds))
        return plan(self, name)

    repairing(
        crowded_watch_world["namespace"], False
    )  # the fillers' objects are missing: only recorded
    monkeypatch.setattr(ClusterWatcher, "_plan", slow_plan)
    with watcher():
        synced(cluster)
    assert len(seen_watched) == FILLERS + 1
    assert FILLERS * 3 * QUICK.heartbeat_seconds > 2 * QUICK.lease_seconds
    assert all(seen_watched[1:]), "the lease lapsed while the namespaces were planned"


def unlocked(call, *args):
    """`call`, or None while the watcher's thread holds the table (SQLite's shared
    in-memory database locks a table while another connection uses it)."""
    try:
        return call(*args)
    except OperationalError:
        return None


def activated(namespace: Namespace) -> bool:
    made = unlocked(lambda: Namespace.objects.filter(pk=namespace.pk).update(state="active"))
    return made is not None


def test_a_change_right_after_a_namespace_became_active_is_seen_before_any_refresh(
    crowded_watch_world, sandbox
):
    """The watcher learns of new namespaces at its refresh (every 30 s); an edit by hand in
    between is compared at once, not left for the hourly resync."""
    shop = crowded_watch_world["namespace"]
    repairing(shop, False)
    Namespace.objects.filter(pk=shop.pk).update(state="provisioning")
    with watcher(timing=dataclasses.replace(QUICK, refresh_seconds=3600)):
        synced(crowded_watch_world["cluster"])
        eventually(lambda: activated(shop), "provisioning ended")
        quota = sandbox.get("ResourceQuota", "berth-quota", shop.name)
        quota["spec"]["hard"]["requests.cpu"] = "64"
        sandbox.upsert(quota)
        changed = eventually(
            lambda: unlocked(finding, shop, f"ResourceQuota/{shop.name}/berth-quota"),
            "the edit recorded with no refresh in between",
        )
    assert changed["status"] == "changed" and "requests.cpu" in changed["detail"]
