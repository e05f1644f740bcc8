"""The cluster watcher against the Kubernetes API stand-in: drift recorded as it happens,
with no periodic job running, through reconnects, compaction and outages; one watcher per
cluster however many run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import OperationalError

from provisioning import tasks
from provisioning.inputs import namespace_input
from provisioning.jobs.watch_streams import WATCHED_KINDS
from provisioning.models import ClusterWatch
from provisioning.plan import namespace_objects
from provisioning.records import observations, watch_leases
from tenants import provisioner
from tests.support.cluster import as_admin
from tests.support.watching import (
    eventually,
    finding,
    repairing,
    synced,
    watched_world,
    watcher,
)

QUOTA = "/api/v1/namespaces/payments-shop-dev/resourcequotas/berth-quota"
DNS_POLICY = (
    "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/networkpolicies/berth-allow-dns"
)


# `sandbox` is the folder's stand-in (tests/provisioning/conftest.py).
@pytest.fixture
def watch_world(transactional_db, sandbox):
    return watched_world(sandbox)


def edit_quota(sandbox, cpu: str = "64") -> None:
    quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    quota["spec"]["hard"]["requests.cpu"] = cpu
    sandbox.upsert(quota)


@contextmanager
def drifted(watch_world, sandbox, *, repair: bool) -> Iterator[None]:
    """Watching, once synced: the quota edited and the DNS policy deleted by hand."""
    repairing(watch_world["namespace"], repair)
    with watcher():
        synced(watch_world["cluster"])
        edit_quota(sandbox)
        as_admin(sandbox, "DELETE", DNS_POLICY)
        yield


def busy_once(monkeypatch, module, name: str, noted: str, armed: list | None = None) -> list:
    """`module.name` answers "database table is locked" once (once `armed` holds something,
    when given), then as itself; what it was called with (`noted`) is listed when refused."""
    real, refused = getattr(module, name), []

    def call(**kwargs):
        if (armed is None or armed) and not refused:
            refused.append(kwargs[noted])
            raise OperationalError(f"database table is locked: {name}")
        return real(**kwargs)

    monkeypatch.setattr(module, name, call)
    return refused


def quota_requests(sandbox, *, watching: bool) -> list[dict]:
    return [
        r
        for r in sandbox.requests()
        if r["path"] == "/api/v1/resourcequotas" and ("watch=true" in r["query"]) == watching
    ]


def test_the_watcher_watches_every_kind_a_namespace_plan_holds(watch_world):
    inputs = namespace_input(watch_world["namespace"])
    objects = namespace_objects(inputs, inputs.namespaces[0])
    planned = {(obj["apiVersion"], obj["kind"]) for obj in objects}
    assert planned <= set(WATCHED_KINDS)


def test_an_edit_and_a_deletion_are_recorded_as_drift_with_no_periodic_job(watch_world, sandbox):
    namespace = watch_world["namespace"]
    with drifted(watch_world, sandbox, repair=False):
        changed = eventually(
            lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
            "the edit recorded",
        )
        missing = eventually(
            lambda: finding(namespace, "NetworkPolicy/payments-shop-dev/berth-allow-dns"),
            "deletion recorded",
        )
    assert changed["status"] == "changed" and "spec.hard.requests.cpu" in changed["detail"]
    assert missing["status"] == "missing"
    assert not changed.get("repaired")  # this tier leaves it to people
    assert sandbox.get("NetworkPolicy", "berth-allow-dns", "payments-shop-dev") is None
    # Nothing read object by object: the watch streams said it all.
    assert not [
        r for r in sandbox.requests() if r["path"] in (QUOTA, DNS_POLICY) and r["method"] == "GET"
    ]


def test_drift_is_repaired_at_once_on_a_repairing_tier(watch_world, sandbox):
    namespace = watch_world["namespace"]
    with drifted(watch_world, sandbox, repair=True):
        eventually(
            lambda: (
                sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")["spec"]["hard"][
                    "requests.cpu"
                ]
                == "1"
            ),
            "the quota put back",
        )
        eventually(
            lambda: sandbox.get("NetworkPolicy", "berth-allow-dns", "payments-shop-dev"),
            "the policy made again",
        )
        repaired = eventually(
            lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
            "the repair recorded",
        )
    assert repaired["status"] == "changed" and repaired["repaired"] is True


def test_an_edit_the_database_did_not_take_at_once_is_recorded_at_the_next_refresh(
    watch_world, sandbox, monkeypatch
):
    """A locked table or a failover for a moment must not lose the event until the hourly
    resync: the object is looked at again when the watcher next refreshes."""
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    refused = busy_once(monkeypatch, observations, "record_object_drift", "ref")
    with watcher():
        synced(watch_world["cluster"])
        edit_quota(sandbox)
        eventually(
            lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
            "the edit recorded after all",
        )
    assert refused == ["ResourceQuota/payments-shop-dev/berth-quota"]


def test_a_heartbeat_the_database_did_not_take_keeps_the_watcher_watching(
    watch_world, sandbox, monkeypatch, caplog
):
    """A locked table at a heartbeat (SQLite's, a failover's moment) must not end the watch
    (a watch started over loses the moments it kept): the beat is put off, the same watch
    goes on and later drift is still recorded."""
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    armed: list[bool] = []
    refused = busy_once(monkeypatch, watch_leases, "watch_heartbeat", "events", armed=armed)
    with watcher():
        synced(watch_world["cluster"])
        armed.append(True)  # a beat of the watch itself, past the first refresh
        eventually(lambda: refused, "a heartbeat refused")
        edit_quota(sandbox)
        eventually(
            lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
            "the edit after the refused beat recorded",
        )
        eventually(lambda: ClusterWatch.objects.filter(events__gt=0).exists(), "the beats go on")
    started = [r for r in caplog.records if r.getMessage().startswith("watching cluster")]
    assert len(started) == 1


def test_an_object_put_back_by_hand_is_no_longer_drift(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    ref = "ResourceQuota/payments-shop-dev/berth-quota"
    with watcher():
        synced(watch_world["cluster"])
        edit_quota(sandbox)
        eventually(lambda: finding(namespace, ref), "the edit recorded")
        edit_quota(sandbox, "1")
        eventually(lambda: finding(namespace, ref) is None, "the finding cleared")


def test_a_reconnect_takes_up_from_the_last_version_and_misses_nothing(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    with watcher():
        synced(watch_world["cluster"])
        lists_before = len(quota_requests(sandbox, watching=False))
        # The API goes away for the quota streams mid-watch...
        sandbox.inject_faults(503, times=None, method="GET", path_contains="/resourcequotas")
        eventually(
            lambda: [r for r in quota_requests(sandbox, watching=True) if r["injected"]],
            "a watch refused",
        )
        edit_quota(sandbox)  # ...while someone changes the quota
        sandbox.clear_faults()

        eventually(
            lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
            "the change made during the outage recorded",
        )
        eventually(
            lambda: ClusterWatch.objects.filter(restarts__gte=1).exists(), "the restart counted"
        )
    # Taken up from the version it had seen: no new LIST, the missed event came by the watch.
    assert len(quota_requests(sandbox, watching=False)) == lists_before
    resumed = [r for r in quota_requests(sandbox, watching=True) if not r["injected"]]
    assert all(
        "resourceVersion=" in r["query"] and "resourceVersion=&" not in r["query"] for r in resumed
    )


def test_a_watch_older_than_the_servers_history_lists_again_and_catches_up(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    with watcher():
        synced(watch_world["cluster"])
        relists = ClusterWatch.objects.get().relists
        lists_before = len(quota_requests(sandbox, watching=False))
        sandbox.inject_faults(503, times=None, method="GET", path_contains="/resourcequotas")
        eventually(
            lambda: [r for r in quota_requests(sandbox, watching=True) if r["injected"]],
            "a watch refused",
        )
        edit_quota(sandbox)
        sandbox.store.events.compact()  # the change is gone from the history: 410 Gone
        sandbox.clear_faults()

        eventually(
            lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
            "the change recorded after a new LIST",
        )
        eventually(lambda: ClusterWatch.objects.get().relists > relists, "the relist counted")
    assert len(quota_requests(sandbox, watching=False)) == lists_before + 1


def test_two_watchers_one_lease_and_the_other_takes_over_when_it_stops(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    cluster = watch_world["cluster"]
    with watcher("replica-a") as stop_a:
        synced(cluster)
        with watcher("replica-b"):
            edit_quota(sandbox)
            eventually(
                lambda: finding(namespace, "ResourceQuota/payments-shop-dev/berth-quota"),
                "the edit recorded",
            )
            # Only the holder lists and watches: one LIST of the quotas, not two.
            assert ClusterWatch.objects.get(cluster=cluster).holder == "replica-a"
            assert len(quota_requests(sandbox, watching=False)) == 1

            stop_a.set()
            eventually(
                lambda: ClusterWatch.objects.get(cluster=cluster).holder == "replica-b",
                "replica-b holds the cluster",
            )
            as_admin(sandbox, "DELETE", DNS_POLICY)
            eventually(
                lambda: finding(namespace, "NetworkPolicy/payments-shop-dev/berth-allow-dns"),
                "replica-b records drift",
            )


def test_beats_reconcile_reads_nothing_from_a_cluster_whose_watcher_is_healthy(
    watch_world, sandbox
):
    repairing(watch_world["namespace"], False)
    with watcher():
        synced(watch_world["cluster"])
        sandbox.clear_requests()
        tasks.reconcile()
        reads = [r for r in sandbox.requests() if "watch=true" not in r["query"]]
    assert reads == []
    # With the watcher gone (its lease lapsed), the periodic job reads each namespace again.
    ClusterWatch.objects.update(heartbeat_at=None, lease_expires_at=None)
    tasks.reconcile()
    assert [r for r in sandbox.requests() if r["path"] == QUOTA and r["method"] == "GET"]


def test_the_truth_table_takes_a_watched_namespace_from_the_watcher_and_agrees_without_it(
    watch_world, sandbox
):
    """Beat's other periodic job: with the watcher healthy the truth table asks the cluster
    nothing about the namespace's objects (the watcher has compared them already), yet
    reports the same states, a hand edit included, as reading each object does."""
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    quota = "ResourceQuota/payments-shop-dev/berth-quota"

    def table_and_reads() -> tuple[dict[str, dict], list[str]]:
        sandbox.clear_requests()
        table = provisioner.take_truth(namespace.tenant)
        reads = [
            r["path"]
            for r in sandbox.requests()
            if "/namespaces/payments-shop-dev/" in r["path"] and "watch=true" not in r["query"]
        ]
        rows = {
            row["object"]: row
            for row in table["rows"]
            if row["source"] == "cluster" and row["namespace"] == "payments-shop-dev"
        }
        return rows, reads

    with watcher():
        synced(watch_world["cluster"])
        rows, reads = table_and_reads()
        assert reads == []
        assert rows and {row["state"] for row in rows.values()} == {"in_sync"}
        assert quota in rows and "Namespace/payments-shop-dev" in rows

        edit_quota(sandbox, cpu="96")
        eventually(lambda: finding(namespace, quota), "the edit recorded")
        watched_rows, reads = table_and_reads()
        assert reads == []
    assert watched_rows[quota]["state"] == "drifted"
    assert "requests.cpu" in watched_rows[quota]["detail"]

    ClusterWatch.objects.update(heartbeat_at=None, lease_expires_at=None)
    read_rows, reads = table_and_reads()
    assert any(path.endswith("/resourcequotas/berth-quota") for path in reads)
    assert {ref: row["state"] for ref, row in read_rows.items()} == {
        ref: row["state"] for ref, row in watched_rows.items()
    }


def test_readyz_only_reports_the_watcher_where_the_deployment_does_not_require_one(
    watch_world, client, settings
):
    settings.BERTH_READYZ_REQUIRES_WATCHER = False
    answer = client.get("/readyz")
    assert answer.status_code == 200, answer.json()
    assert "watcher" not in answer.json()["checks"]
    assert answer.json()["watcher"]["ok"] is False  # still said


def test_readyz_and_metrics_show_the_watchers_health_and_figures(watch_world, sandbox, client):
    repairing(watch_world["namespace"], False)
    unwatched = client.get("/readyz")  # nobody watches yet: not ready, the cluster named
    assert unwatched.status_code == 503
    assert unwatched.json()["checks"]["watcher"] == {
        "ok": False,
        "error": "no watcher has beaten within its lease for sandbox "
        "(drift there waits for beat's reconcile)",
    }
    with watcher():
        synced(watch_world["cluster"])
        edit_quota(sandbox)
        eventually(lambda: ClusterWatch.objects.filter(events__gte=1).exists(), "event counted")
        ready = client.get("/readyz")
        text = client.get("/metrics").content.decode()
    assert ready.status_code == 200, ready.json()
    assert ready.json()["watcher"] == {"ok": True}
    # Each kind of a tenant namespace listed once, and each guardrail kind.
    assert 'berth_watch_relists_total{cluster="sandbox"} 10.0' in text
    events = next(
        line
        for line in text.splitlines()
        if line.startswith('berth_watch_events_total{cluster="sandbox"}')
    )
    assert float(events.split()[-1]) >= 1
    assert 'berth_watch_restarts_total{cluster="sandbox"}' in text
