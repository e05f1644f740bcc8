"""Provisioning through the real stack: PostgreSQL, Redis, Celery worker processes and the
Kubernetes API stand-in over HTTP."""

import os
import signal

import pytest

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from provisioning import reconcile
from provisioning.models import QueuedKey
from provisioning.tasks import sweep
from tenants import services
from tenants.choices import RequestState
from tenants.models import Request
from tests.support.integration import celery_worker, needs_postgres_and_redis, wait_for
from tests.support.prov_world import demo_world
from tests.support.workflow import approve_if_needed

pytestmark = [pytest.mark.integration, needs_postgres_and_redis]


@pytest.fixture
def sandbox():
    namespaces = (*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES)
    with KubeSandbox(namespaces=namespaces, crds=upstream_crds()) as running:
        yield running


@pytest.fixture
def worker_engine_world(transactional_db, sandbox):
    return demo_world(sandbox)


def approve(worker_engine_world, app="shop") -> Request:
    """Submit and approve as people would; approval enqueues the job on commit."""
    submitted = services.submit_request(
        tenant=worker_engine_world["tenant"],
        kind="namespace",
        requester=worker_engine_world["developer"],
        payload={"app": app, "tier": "dev", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )
    return approve_if_needed(submitted, approver=worker_engine_world["admin"])


def state_of(tenancy_request: Request) -> str:
    return Request.objects.values_list("state", flat=True).get(pk=tenancy_request.pk)


def test_approval_is_provisioned_by_a_worker_through_redis(worker_engine_world, sandbox):
    with celery_worker(name="provision"):
        tenancy_request = approve(worker_engine_world)
        wait_for(lambda: state_of(tenancy_request) == RequestState.READY, what="request ready")

    plan = reconcile.current_plan(tenancy_request)
    for obj in plan.apply:
        meta = obj["metadata"]
        live = sandbox.get(
            obj["kind"], meta["name"], meta.get("namespace"), api_version=obj["apiVersion"]
        )
        assert live is not None and live["metadata"]["labels"]["berth.dev/request"] == str(
            tenancy_request.pk
        )


def test_api_answering_500_three_times_then_succeeding_is_ready_with_attempts(
    worker_engine_world, sandbox
):
    sandbox.inject_faults(status=500, times=3, method="PATCH")
    with celery_worker(name="flaky"):
        tenancy_request = approve(worker_engine_world)
        wait_for(lambda: state_of(tenancy_request) == RequestState.READY, what="request ready")

    steps = [step for step in tenancy_request.runs.get().steps if step["action"] == "apply"]
    # Whichever applies the three 500s hit were tried again; each step counts its tries.
    assert sum(step["attempts"] for step in steps) == len(steps) + 3


def test_worker_killed_mid_run_is_recovered_by_the_sweep_without_duplicates(
    worker_engine_world, sandbox, settings
):
    # Every write takes a while, so the kill lands in the middle of the run.
    sandbox.inject_delay(0.3, times=None, method="PATCH")
    with celery_worker(name="doomed") as doomed:
        tenancy_request = approve(worker_engine_world)
        wait_for(
            lambda: len([r for r in sandbox.requests() if r["method"] == "PATCH"]) >= 3,
            what="the first objects to be applied",
        )
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait()
    assert state_of(tenancy_request) == RequestState.PROVISIONING
    sandbox.clear_faults()

    # The dead worker's lease runs out, and with it its hold on the namespace's key (both
    # last BERTH_LEASE_SECONDS, renewed together); the sweep hands the request to a new
    # worker.
    held = QueuedKey.objects.exclude(claimed_by="")
    assert [row.claimed_by.split("@")[0] for row in held] == ["doomed"]
    Request.objects.filter(pk=tenancy_request.pk).update(lease_expires_at=None)
    held.update(claimed_until=None)
    with celery_worker(name="rescuer"):
        sweep.delay()
        wait_for(lambda: state_of(tenancy_request) == RequestState.READY, what="request ready")

    plan = reconcile.current_plan(tenancy_request)
    namespaced = [
        o for o in sandbox.objects() if o["metadata"].get("namespace") == "payments-shop-dev"
    ]
    expected = [o for o in plan.apply if o["metadata"].get("namespace") == "payments-shop-dev"]
    assert len(namespaced) == len(expected)
    assert (
        len(sandbox.objects(kind="Namespace"))
        == len(DEFAULT_NAMESPACES) + len(PLATFORM_NAMESPACES) + 2
    )  # the tenant's namespace and its apps namespace
    run = tenancy_request.runs.get()
    assert run.attempts == 2
    applied = {step["outcome"] for step in run.steps if step["action"] == "apply"}
    assert applied <= {"created", "unchanged", "configured"}


def test_an_expired_ephemeral_environment_is_removed_by_the_beat_job_through_a_worker(
    worker_engine_world, sandbox
):
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    from tenants.choices import EnvironmentState
    from tenants.models import EphemeralEnvironment, Project
    from tenants.tasks import expire_environments

    Project.objects.create(tenant=worker_engine_world["tenant"], name="shop")
    with celery_worker(name="ephemeral"):
        created = services.submit_request(
            tenant=worker_engine_world["tenant"],
            kind="ephemeral",
            requester=worker_engine_world["developer"],
            payload={"project": "shop", "env_slug": "review-5", "ttl": "1m"},
        )
        environment = EphemeralEnvironment.objects.get(request=created)
        wait_for(
            lambda: (
                EphemeralEnvironment.objects.get(pk=environment.pk).state == EnvironmentState.LIVE
            ),
            what="environment live",
        )
        assert sandbox.get("Namespace", "payments-shop-review-5") is not None

        # Beat's job, run here a minute and a bit later (the clock moves in this process
        # only); the end request it opens goes to the worker through Redis.
        with time_machine.travel(timezone.now() + timedelta(seconds=70)):
            assert expire_environments()["ended"] == [environment.pk]
        wait_for(
            lambda: (
                EphemeralEnvironment.objects.get(pk=environment.pk).state == EnvironmentState.ENDED
            ),
            what="environment ended",
        )
        # The same run closes the environment's own request a moment later: wait for it
        # before the worker is stopped.
        wait_for(
            lambda: state_of(created) == RequestState.DECOMMISSIONED,
            what="the environment's request decommissioned",
        )

    assert sandbox.get("Namespace", "payments-shop-review-5") is None
