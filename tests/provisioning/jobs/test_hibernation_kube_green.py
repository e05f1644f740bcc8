"""Hibernation where the cluster has kube-green (its CRD, copied unchanged into
../shared/crds-optional, loaded into the stand-in): Berth finds it, writes one SleepInfo per
sleeping namespace that the CRD's schema accepts and that says the tier's schedule, leaves
the workloads to kube-green (pausing the GitOps engines itself), puts the SleepInfo back
when edited by hand (the truth table says it drifted, then in sync), and removes it when the
namespace stops sleeping."""

from __future__ import annotations

import pytest
import time_machine

from provisioning import tasks
from provisioning.jobs import sweep_namespace, take_truth
from provisioning.reconcile import door
from tenants import services
from tenants.choices import RequestState
from tenants.models import Namespace, User
from tests.support.gitops_loop import work
from tests.support.hibernation import (
    SLEEP_AT,
    TUESDAY_NIGHT,
    WAKE_AT,
    engines,
    live,
    load_kube_green,
    settle,
    sleepy_namespace,
    workloads,
)


@pytest.fixture
def namespace(gitops_world, sandbox) -> Namespace:
    return sleepy_namespace(gitops_world, sandbox)


@pytest.fixture
def kube_green(sandbox) -> None:
    load_kube_green(sandbox)


def test_with_kube_green_berth_writes_the_schedule_kube_green_keeps(
    gitops_world, sandbox, namespace, kube_green
):
    cluster = gitops_world["cluster"]
    assert tasks.reconcile() >= 0  # beat's job finds kube-green on the cluster
    cluster.refresh_from_db()
    assert cluster.has_kube_green
    namespace.refresh_from_db()
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        settle(namespace)
        sleep_info = sandbox.get("SleepInfo", "berth-sleep", namespace.name)
        assert sleep_info is not None, "the CRD's schema refused it"
        assert sleep_info["spec"] == {
            "weekdays": "*",
            "sleepAt": SLEEP_AT.strftime("%H:%M"),
            "wakeUpAt": WAKE_AT.strftime("%H:%M"),
            "timeZone": "UTC",
            "suspendCronJobs": True,
            "excludeRef": [{"matchLabels": {"berth.dev/sleep": "never"}}],
        }
        assert sleep_info["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "berth"
        # kube-green scales the workloads; Berth pauses the GitOps engines.
        assert live(sandbox, workloads(namespace.name)[0])["spec"]["replicas"] == 3
        app = live(sandbox, engines(namespace.name)[0])
        assert app["spec"]["syncPolicy"]["automated"]["enabled"] is False
        assert sweep_namespace(namespace) == []


def test_a_sleep_info_edited_by_hand_is_put_back(gitops_world, sandbox, namespace, kube_green):
    tasks.reconcile()
    namespace.refresh_from_db()
    settle(namespace)
    edited = sandbox.get("SleepInfo", "berth-sleep", namespace.name)
    edited["spec"]["sleepAt"] = "23:59"
    sandbox.upsert(edited)
    sweep_namespace(namespace)
    put_back = sandbox.get("SleepInfo", "berth-sleep", namespace.name)
    assert put_back["spec"]["sleepAt"] == SLEEP_AT.strftime("%H:%M")


def test_a_namespace_that_stops_sleeping_loses_its_sleep_info(
    gitops_world, sandbox, namespace, kube_green, django_capture_on_commit_callbacks
):
    tasks.reconcile()
    namespace.refresh_from_db()
    settle(namespace)
    assert sandbox.get("SleepInfo", "berth-sleep", namespace.name) is not None
    with django_capture_on_commit_callbacks(execute=True):
        asked = services.request_sleep_schedule(
            namespace=namespace,
            requester=User.objects.get(username="olivia"),
            schedule={"mode": "never"},
        )
        work()
    door.drain(worker="test")  # the schedule's change reaches the namespace's key
    asked.refresh_from_db()
    assert asked.state == RequestState.READY, asked.status_message
    assert sandbox.get("SleepInfo", "berth-sleep", namespace.name) is None
    assert sweep_namespace(namespace) == []


def test_the_truth_table_holds_the_sleep_info_in_sync_and_a_repair_puts_it_back(
    gitops_world, sandbox, namespace, kube_green
):
    tasks.reconcile()
    namespace.refresh_from_db()
    settle(namespace)
    ours = f"SleepInfo/{namespace.name}/berth-sleep"
    taken = take_truth(namespace.tenant)
    row = next(r for r in taken["rows"] if r["object"] == ours)
    assert row["state"] == "in_sync", row
    edited = sandbox.get("SleepInfo", "berth-sleep", namespace.name)
    edited["spec"]["weekdays"] = "0"  # sleep on Sundays only, by hand
    sandbox.upsert(edited)
    taken = take_truth(namespace.tenant)
    row = next(r for r in taken["rows"] if r["object"] == ours)
    assert row["state"] == "drifted", row
    sweep_namespace(namespace)  # the schedule is Berth's clock: put back whatever the tier
    taken = take_truth(namespace.tenant)
    row = next(r for r in taken["rows"] if r["object"] == ours)
    assert row["state"] == "in_sync", row
