"""Hibernation on the stand-in, as Berth's ServiceAccount with the chart's RBAC: without
kube-green, a namespace with two Deployments (3 and 1 replicas), a StatefulSet and a CronJob
sleeps and wakes with replicas and suspension restored exactly; the team's Argo CD
Application and Flux Kustomization deploying there pause and resume; nothing is called
drift meanwhile; a wake on demand works during sleep and sleep resumes at its end, with the
watcher keeping time (no job run by hand); (kube-green: test_hibernation_kube_green.py)."""

from __future__ import annotations

from datetime import time, timedelta

import pytest
import time_machine

from provisioning.jobs import sweep_namespace
from provisioning.reconcile import door
from tenants import services
from tenants.choices import RequestState, Role
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import (
    Allocation,
    AuditEvent,
    EnvironmentTier,
    Membership,
    Namespace,
    User,
)
from tests.support.gitops_loop import work
from tests.support.hibernation import (
    CART,
    TUESDAY_NIGHT,
    WEDNESDAY_MORNING,
    engines,
    live,
    settle,
    sleepy_namespace,
    spec_and_annotations,
    workloads,
)
from tests.support.watching import eventually, synced, watcher


@pytest.fixture
def namespace(gitops_world, sandbox) -> Namespace:
    return sleepy_namespace(gitops_world, sandbox)


def test_a_namespace_sleeps_and_wakes_exactly_as_it_was(gitops_world, sandbox, namespace):
    objects = workloads(namespace.name) + engines(namespace.name)
    before = {
        obj["metadata"]["name"] + obj["kind"]: spec_and_annotations(live(sandbox, obj))
        for obj in objects
    }

    cart = Namespace.objects.select_related("tier", "cluster").get(name=CART)
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        settle(namespace)
        settle(cart)
        web, worker, db, report, pager, app, other, kustomization = (
            live(sandbox, obj) for obj in objects
        )
        assert (web["spec"]["replicas"], worker["spec"]["replicas"], db["spec"]["replicas"]) == (
            0,
            0,
            0,
        )
        assert web["metadata"]["annotations"]["berth.dev/replicas-before-sleep"] == "3"
        assert report["spec"]["suspend"] is True
        assert pager["spec"]["replicas"] == 1  # excluded by its label
        assert app["spec"]["syncPolicy"]["automated"] == {
            "prune": True,
            "selfHeal": True,
            "enabled": False,
        }
        assert other["spec"]["syncPolicy"]["automated"].get("enabled") is None
        assert kustomization["spec"]["suspend"] is True
        namespace.refresh_from_db()
        assert namespace.asleep and namespace.slept_at == TUESDAY_NIGHT
        # Asleep is not drift: the sweep finds nothing and changes nothing.
        assert sweep_namespace(namespace) == []
        assert live(sandbox, objects[0])["spec"]["replicas"] == 0
        namespace.refresh_from_db()
        assert namespace.drift == []

    with time_machine.travel(WEDNESDAY_MORNING, tick=False):
        door.drain(worker="test")  # the sleep key's moment has come
        after = {
            obj["metadata"]["name"] + obj["kind"]: spec_and_annotations(live(sandbox, obj))
            for obj in objects
        }
    for name, (spec, had) in before.items():
        woken_spec, woken_annotations = after[name]
        assert woken_spec == spec, name
        extra = {k: v for k, v in woken_annotations.items() if k not in had}
        # Each engine is asked to look again at once; nothing else is left behind.
        assert set(extra) <= {"argocd.argoproj.io/refresh", "reconcile.fluxcd.io/requestedAt"}, name
    namespace.refresh_from_db()
    assert not namespace.asleep
    slept, woke = AuditEvent.objects.filter(
        action__in=["namespace.slept", "namespace.woke"], object_id=str(namespace.pk)
    ).order_by("pk")
    assert (slept.action, woke.action) == ("namespace.slept", "namespace.woke")
    assert {"object": f"Deployment/{namespace.name}/web", "status": "replicas 0"} in slept.after[
        "changes"
    ]
    # Showback: an allocation while it slept, marked so, between two awake ones.
    held = list(Allocation.objects.filter(namespace=namespace).order_by("started_at"))
    assert [(a.asleep, a.started_by) for a in held[-2:]] == [(True, "hibernated"), (False, "woken")]
    assert (held[-2].started_at, held[-2].ended_at) == (TUESDAY_NIGHT, WEDNESDAY_MORNING)


def test_a_deployment_scaled_up_while_asleep_goes_back_to_sleep_and_wakes_as_before(
    gitops_world, sandbox, namespace
):
    web = workloads(namespace.name)[0]
    with time_machine.travel(TUESDAY_NIGHT, tick=False):
        settle(namespace)
        scaled = live(sandbox, web)
        scaled["spec"]["replicas"] = 5  # the team's pipeline deployed meanwhile
        sandbox.upsert(scaled)
    with time_machine.travel(TUESDAY_NIGHT + timedelta(hours=1), tick=False):
        sweep_namespace(namespace)  # beat's sweep keeps it asleep
        assert live(sandbox, web)["spec"]["replicas"] == 0
    with time_machine.travel(WEDNESDAY_MORNING, tick=False):
        door.drain(worker="test")
        assert live(sandbox, web)["spec"]["replicas"] == 3


def test_a_wake_on_demand_lasts_its_hours_and_sleep_resumes_by_the_watcher(
    transactional_db, gitops_world, sandbox, namespace, django_capture_on_commit_callbacks
):
    """No job run by hand: the watcher keeps each namespace's next moment."""
    web = workloads(namespace.name)[0]
    dev = User.objects.get(username="dev")
    with time_machine.travel(TUESDAY_NIGHT, tick=True) as clock:
        settle(namespace)
        assert live(sandbox, web)["spec"]["replicas"] == 0
        with watcher():
            synced(gitops_world["cluster"])
            with django_capture_on_commit_callbacks(execute=True):
                until = services.wake_namespace(namespace_id=namespace.pk, actor=dev, hours=1)
            # An hour from when it was asked, before the schedule's own wake.
            assert (
                timedelta(0) <= until - (TUESDAY_NIGHT + timedelta(hours=1)) < timedelta(seconds=30)
            )
            door.drain(worker="test")  # what the queue's worker does with the wake
            eventually(lambda: live(sandbox, web)["spec"]["replicas"] == 3, "woken")
            clock.move_to(until + timedelta(seconds=1))
            eventually(lambda: live(sandbox, web)["spec"]["replicas"] == 0, "asleep again")
            eventually(
                lambda: Namespace.objects.filter(pk=namespace.pk, asleep=True).exists(),
                "recorded asleep",
            )
    woken = AuditEvent.objects.get(action="namespace.woken")
    assert woken.actor.username == "dev" and woken.after["asleep_then"] is True


def test_who_may_wake_and_for_how_long(gitops_world, namespace):
    viewer = User.objects.create(username="vic")
    Membership.objects.create(user=viewer, tenant=namespace.tenant, role=Role.VIEWER)
    outsider = User.objects.get(username="sam")  # of search
    for stranger in (outsider, viewer):
        with pytest.raises(NotAllowed):
            services.wake_namespace(namespace_id=namespace.pk, actor=stranger)
    with pytest.raises(InvalidInput, match="1 to 12 hours"):
        services.wake_namespace(
            namespace_id=namespace.pk, actor=User.objects.get(username="dev"), hours=13
        )
    namespace.refresh_from_db()
    assert namespace.awake_until is None
    namespace.sleep_mode = "never"
    namespace.save(update_fields=["sleep_mode"])
    with pytest.raises(DomainError, match="no sleep schedule"):
        services.wake_namespace(namespace_id=namespace.pk, actor=User.objects.get(username="dev"))


def test_a_schedule_is_a_request_owners_may_set_within_their_tier(gitops_world, sandbox, namespace):
    owner = User.objects.get(username="olivia")
    asked = services.request_sleep_schedule(
        namespace=namespace,
        requester=owner,
        schedule={
            "mode": "custom",
            "sleep_weekdays": "1-5",
            "sleep_at": "19:00",
            "wake_at": "07:30",
            "sleep_time_zone": "Europe/Rome",
        },
    )
    assert asked.state == RequestState.APPROVED, asked.status_message
    work()
    asked.refresh_from_db()
    assert asked.state == RequestState.READY, asked.status_message
    namespace.refresh_from_db()
    assert (namespace.sleep_mode, namespace.sleep_weekdays, namespace.sleep_at) == (
        "custom",
        "1-5",
        time(19),
    )
    assert namespace.schedule().time_zone == "Europe/Rome"


def test_a_schedule_beyond_the_tier_goes_to_a_platform_admin(gitops_world, namespace):
    EnvironmentTier.objects.filter(slug="dev").update(sleep_owner_choice="times")
    owner = User.objects.get(username="olivia")
    asked = services.request_sleep_schedule(
        namespace=namespace, requester=owner, schedule={"mode": "never"}
    )
    assert asked.state == RequestState.SUBMITTED
    assert asked.approver_role == "platform_admin"


def test_an_idle_namespace_sleeps_and_a_deploy_wakes_it(
    gitops_world, sandbox, namespace, django_capture_on_commit_callbacks
):
    """A tier that sleeps when idle (review environments): after its hours without a deploy
    the namespace sleeps; a deploy token minted for it (a pipeline about to deploy) wakes it."""
    EnvironmentTier.objects.filter(slug="dev").update(
        sleep_weekdays="",
        sleep_at=None,
        wake_at=None,
        sleep_after_idle_hours=2,
        deploy_tokens_allowed=True,
    )
    namespace.refresh_from_db()
    web = workloads(namespace.name)[0]
    idle_at = namespace.created_at + timedelta(hours=2)
    with time_machine.travel(idle_at - timedelta(minutes=1), tick=False):
        settle(namespace)
        assert live(sandbox, web)["spec"]["replicas"] == 3
    with time_machine.travel(idle_at + timedelta(seconds=1), tick=False):
        door.drain(worker="test")  # the sleep key waited for the idle moment
        assert live(sandbox, web)["spec"]["replicas"] == 0
        with django_capture_on_commit_callbacks(execute=True):
            services.mint_deploy_token(
                user=User.objects.get(username="dev"), namespace=namespace, ttl_minutes=15
            )
        door.drain(worker="test")
        assert live(sandbox, web)["spec"]["replicas"] == 3
        namespace.refresh_from_db()
        assert not namespace.asleep and namespace.last_deploy_at == idle_at + timedelta(seconds=1)
