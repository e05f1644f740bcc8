"""Where the keyed door meets the rest: the watcher defers what it sees of a key only while a
worker holds that key (not every namespace of a tenant with a request somewhere), every
repair is in the audit log naming its cause, and a key queued twice is reconciled once."""

from __future__ import annotations

import pytest

from provisioning import tasks
from provisioning.models import QueuedKey
from provisioning.reconcile import door, queue
from provisioning.reconcile.keys import namespace_key
from provisioning.reconcile.queue import Cause
from tenants.choices import GuardrailsMode, RequestState
from tenants.conditions import Reason, is_true
from tenants.models import AuditEvent, Cluster, Namespace
from tests.support.jobs_engine import approved
from tests.support.watching import eventually, repairing, synced, watched_world, watcher
from tests.support.workflow import converge

KEY = namespace_key("sandbox", "payments-shop-dev")


@pytest.fixture
def watch_world(transactional_db, sandbox):
    return watched_world(sandbox)


def quota_cpu(sandbox) -> str:
    return sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")["spec"]["hard"][
        "requests.cpu"
    ]


def edit_quota(sandbox, cpu: str = "64") -> None:
    quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    quota["spec"]["hard"]["requests.cpu"] = cpu
    sandbox.upsert(quota)


def repairs(namespace: Namespace) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(
            action="namespace.reconciled", object_id=str(namespace.pk)
        ).order_by("id")
    )


def waiting_on_another_cluster(watch_world, settings):
    """A request of the same tenant for a second cluster whose guardrails are not
    installed: approved, waiting for them."""
    settings.BERTH_GUARDRAILS_CHECK_SECONDS = 0
    edge = Cluster.objects.get(name="sandbox")
    edge.pk, edge.name = None, "edge"
    edge.guardrails, edge.guardrails_digest = GuardrailsMode.BERTH, ""
    edge.save()
    watch_world["namespace"].tenant.allowed_clusters.add(edge)
    world = {
        "tenant": watch_world["namespace"].tenant,
        "developer": watch_world["namespace"].request.requester,
        "admin": None,
    }
    made = approved(world, app="api", tier="dev", cluster="edge", cpu="500m", memory="512Mi")
    waiting = converge(made)
    assert waiting.state == RequestState.APPROVED, waiting.status_message
    assert waiting.waiting_for == Reason.GUARDRAILS
    assert is_true(waiting.conditions, "Waiting")
    return waiting


def test_a_request_waiting_on_cluster_b_does_not_defer_drift_repair_on_cluster_a(
    watch_world, sandbox, settings
):
    waiting = waiting_on_another_cluster(watch_world, settings)
    repairing(watch_world["namespace"], True)
    with watcher():
        synced(watch_world["cluster"])
        edit_quota(sandbox)
        eventually(lambda: quota_cpu(sandbox) == "1", "the quota put back on cluster A")
    waiting.refresh_from_db()
    assert waiting.state == RequestState.APPROVED  # still waiting on B, and A went on


def test_a_key_a_worker_holds_defers_the_watchers_repair_until_it_is_released(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, True)
    with queue.holding([KEY], worker="a-run", cause=Cause("request", 1)) as held:
        assert held == set()
        with watcher():
            synced(watch_world["cluster"])
            edit_quota(sandbox)
            # Seen, and deferred: the run holding the key may be writing it.
            eventually(lambda: QueuedKey.objects.filter(key=str(KEY)).exists(), "key held")
            assert quota_cpu(sandbox) == "64"
    with watcher():
        synced(watch_world["cluster"])
        eventually(lambda: quota_cpu(sandbox) == "1", "repaired once the key is free")
    (event,) = repairs(namespace)
    assert event.after["causes"] == ["drift (ResourceQuota/payments-shop-dev/berth-quota changed)"]


def test_every_repair_names_its_cause_in_the_audit_log(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, True)
    with watcher():
        synced(watch_world["cluster"])
        edit_quota(sandbox, "64")
        eventually(lambda: quota_cpu(sandbox) == "1", "the watcher's repair")
    edit_quota(sandbox, "65")
    tasks.reconcile()  # beat's sweep (no watcher now)
    assert quota_cpu(sandbox) == "1"
    edit_quota(sandbox, "66")
    door.run([KEY], cause=Cause("repair", actor="pat"), worker="admin-page")
    assert quota_cpu(sandbox) == "1"

    causes = [event.after["causes"] for event in repairs(namespace)]
    assert causes == [
        ["drift (ResourceQuota/payments-shop-dev/berth-quota changed)"],
        ["sweep"],
        ["repair by pat"],
    ]
    for event in repairs(namespace):
        assert event.after["changes"] == [
            {
                "object": "ResourceQuota/payments-shop-dev/berth-quota",
                "status": "changed",
                "detail": "spec.hard.requests.cpu",
            }
        ]
    namespace.refresh_from_db()
    assert is_true(namespace.conditions, "Ready")


def test_drift_on_a_tier_that_does_not_repair_is_recorded_and_left(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    edit_quota(sandbox)
    found = door.sweep_namespace(namespace)
    assert [f["status"] for f in found] == ["changed"]
    assert quota_cpu(sandbox) == "64"
    assert repairs(namespace) == []


def test_a_key_queued_twice_is_reconciled_once_with_both_causes(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, True)
    edit_quota(sandbox)
    queue.add([KEY], cause=Cause("drift"))
    queue.add([KEY], cause=Cause("repair", actor="pat"))
    assert QueuedKey.objects.count() == 1
    done = door.drain(worker="w")
    assert list(done) == [KEY]
    assert quota_cpu(sandbox) == "1"
    assert not QueuedKey.objects.exists()
    (event,) = repairs(namespace)
    assert event.after["causes"] == ["drift", "repair by pat"]


def test_a_key_queued_while_held_is_reconciled_again_after(watch_world, sandbox):
    namespace = watch_world["namespace"]
    repairing(namespace, True)
    (claim,), held = queue.claim([KEY], worker="w1", cause=Cause("sweep"))
    assert held == []
    queue.add([KEY], cause=Cause("drift"))  # seen while w1 works on it
    got, held = queue.claim([KEY], worker="w2", cause=Cause("repair"))
    assert (got, held) == ([], [KEY])  # one worker per key
    queue.done(claim, worker="w1")
    row = QueuedKey.objects.get()
    assert row.claimed_by == "" and [c["kind"] for c in row.causes] == ["drift", "repair"]
    edit_quota(sandbox)
    assert list(door.drain(worker="w2")) == [KEY]
    assert quota_cpu(sandbox) == "1"
