"""Where hibernation meets the rest: a cluster that does not answer at the sleeping moment
(the sleep key waits and the namespace sleeps once it answers), a Repair of a sleeping
namespace (its Berth objects put back, its workloads left asleep), a decommission of a
sleeping namespace (its allocation closed, its sleep key gone with it), and an upgrade
campaign reaching a sleeping namespace (its new definition applied, its workloads asleep)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from provisioning.models import QueuedKey
from provisioning.reconcile import door
from provisioning.reconcile.keys import namespace_key, sleep_key
from provisioning.reconcile.queue import Cause
from tenants import services
from tenants.choices import CampaignState, NamespaceState
from tenants.models import Allocation, EnvironmentTier, Namespace
from tests.support.gitops_loop import submit, work
from tests.support.hibernation import TUESDAY_NIGHT, live, settle, sleepy_namespace, workloads
from tests.support.jobs_campaigns import roll
from tests.support.workflow import approve_if_needed


@pytest.fixture
def namespace(gitops_world, sandbox) -> Namespace:
    return sleepy_namespace(gitops_world, sandbox)


def test_a_cluster_down_at_the_moment_puts_the_sleep_off_until_it_answers(
    gitops_world, sandbox, namespace, settings
):
    settings.KUBE_MAX_ATTEMPTS = 1  # the outage is seen at once, not retried in the call
    web = workloads(namespace.name)[0]
    key = str(sleep_key("sandbox", namespace.name))
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        sandbox.inject_faults(503, times=None, path_contains=namespace.name)
        settle(namespace)
        waiting = QueuedKey.objects.get(key=key)
        assert waiting.not_before > TUESDAY_NIGHT and "503" in waiting.last_error
        sandbox.clear_faults()
        namespace.refresh_from_db()
        assert not namespace.asleep
        assert live(sandbox, web)["spec"]["replicas"] == 3
    with time_machine.travel(waiting.not_before + timedelta(seconds=1), tick=False):
        door.drain(worker="test")
        assert live(sandbox, web)["spec"]["replicas"] == 0
        namespace.refresh_from_db()
        assert namespace.asleep


def test_a_repair_of_a_sleeping_namespace_leaves_it_asleep(gitops_world, sandbox, namespace):
    web = workloads(namespace.name)[0]
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        settle(namespace)
        quota = sandbox.get("ResourceQuota", "berth-quota", namespace.name)
        quota["spec"]["hard"] = {"pods": "1000"}  # drift on Berth's own object
        sandbox.upsert(quota)
        key = namespace_key("sandbox", namespace.name)
        result = door.run([key], cause=Cause("repair", actor="pat"), worker="test")[key]
        assert any(f.get("repaired") for f in result.findings)
        assert sandbox.get("ResourceQuota", "berth-quota", namespace.name)["spec"]["hard"] != {
            "pods": "1000"
        }
        assert live(sandbox, web)["spec"]["replicas"] == 0


def test_a_sleeping_namespace_decommissioned_leaves_nothing_behind(
    gitops_world, sandbox, namespace
):
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        settle(namespace)
    removal = submit(gitops_world, "decommission", namespace=namespace.name, reason="moved on")
    approve_if_needed(removal, approver=gitops_world["admin"])
    work()
    namespace.refresh_from_db()
    assert namespace.state == NamespaceState.DECOMMISSIONED
    assert not Allocation.objects.filter(namespace=namespace, ended_at__isnull=True).exists()
    door.drain(worker="test")
    key = str(sleep_key("sandbox", namespace.name))
    # Its next moment comes:
    QueuedKey.objects.filter(key=key).update(not_before=timezone.now() - timedelta(seconds=1))
    door.drain(worker="test")
    assert not QueuedKey.objects.filter(key=key).exists()


def test_a_campaign_reaches_a_sleeping_namespace_and_leaves_it_asleep(
    gitops_world, sandbox, namespace
):
    web = workloads(namespace.name)[0]
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        settle(namespace)
        EnvironmentTier.objects.filter(slug="dev").update(container_default_memory_mib=768)
        campaign = services.create_campaign(
            actor=gitops_world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="Dev containers default to 768Mi.",
            canary=1,
            batch=10,
        )
        assert roll(campaign) == CampaignState.DONE
        limit = sandbox.get("LimitRange", "berth-limits", namespace.name)
        assert limit["spec"]["limits"][0]["default"]["memory"] == "768Mi"
        assert live(sandbox, web)["spec"]["replicas"] == 0
        namespace.refresh_from_db()
        assert namespace.asleep
