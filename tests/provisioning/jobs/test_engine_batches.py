"""Requests approved together are provisioned together, against the Kubernetes API stand-in
over real HTTP: one job per batch for one cluster, at most BERTH_PROVISION_BATCH_MAX requests,
each with its own run and outcome; the tenant's shared objects are applied once, and a
refused object or a plan that cannot be rendered fails only its own request."""

from provisioning import reconcile, tasks
from provisioning.plan import ref_of
from tenants import services
from tenants.choices import ApproverRole, NamespaceState, PolicyOutcome, RequestState, RunState
from tenants.conditions import Phase
from tenants.models import ApprovalRule, AuditEvent, Namespace, Request
from tenants.selectors import review
from tests.support.jobs_engine import (
    approved_many,
    states_of,
    submitted_many,
)
from tests.support.workflow import WORKER, converge


def test_requests_approved_together_are_provisioned_together_each_with_its_own_run(
    engine_world, engine_sandbox
):
    batch = approved_many(engine_world, 3)
    engine_sandbox.clear_requests()

    assert reconcile.converge(request_id=batch[0].pk, worker=WORKER).phase is Phase.READY

    wanted: dict[str, dict] = {}
    for tenancy_request in batch:
        tenancy_request.refresh_from_db()
        assert tenancy_request.state == RequestState.READY
        run = tenancy_request.runs.get()
        assert run.state == RunState.SUCCEEDED
        plan = reconcile.current_plan(tenancy_request).apply
        assert [step["object"] for step in run.steps[:-1]] == [str(ref_of(o)) for o in plan]
        assert {step["outcome"] for step in run.steps[:-1]} <= {
            "created",
            "configured",
            "unchanged",
        }
        actions = list(
            AuditEvent.objects.filter(
                object_id=str(tenancy_request.pk), action__startswith="request."
            )
            .order_by("pk")
            .values_list("action", flat=True)
        )
        assert actions[-2:] == ["request.start_provisioning", "request.mark_ready"]
        assert Namespace.objects.get(request=tenancy_request).state == NamespaceState.ACTIVE
        wanted.update((str(ref_of(obj)), obj) for obj in plan)
    for obj in wanted.values():
        meta = obj["metadata"]
        assert (
            engine_sandbox.get(
                obj["kind"], meta["name"], meta.get("namespace"), api_version=obj["apiVersion"]
            )
            is not None
        )
    # The tenant's own objects, alike in the three plans, went out once: one apply each.
    patches = [r for r in engine_sandbox.requests() if r["method"] == "PATCH"]
    assert len(patches) == len(wanted)
    assert sum(r["path"].endswith("/namespaces/payments-apps") for r in patches) == 1


def test_a_refused_object_fails_only_its_own_request_in_a_batch(engine_world, engine_sandbox):
    first, refused, last = approved_many(engine_world, 3)
    engine_sandbox.inject_faults(
        status=422,
        times=1,
        method="PATCH",
        path_contains="namespaces/payments-app1-dev/rolebindings",
        message="RoleBinding is invalid",
    )

    converge(first)

    assert states_of(first, refused, last) == [
        RequestState.READY,
        RequestState.FAILED,
        RequestState.READY,
    ]
    steps = refused.runs.get().steps
    assert [step["kind"] for step in steps if step["outcome"] == "failed"] == ["RoleBinding"]
    assert "RoleBinding is invalid" in refused.status_message
    assert Namespace.objects.get(request=last).state == NamespaceState.ACTIVE


def test_a_worker_takes_at_most_the_batch_size_and_only_requests_for_its_cluster(
    engine_world, engine_sandbox, settings
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    first, second, third, elsewhere = approved_many(engine_world, 4)
    Request.objects.filter(pk=elsewhere.pk).update(
        payload={**elsewhere.payload, "cluster": "another"}
    )

    converge(first)

    assert states_of(first, second, third, elsewhere) == [
        RequestState.READY,
        RequestState.READY,
        RequestState.APPROVED,
        RequestState.APPROVED,
    ]
    # Nobody holds what the batch did not take.
    assert not Request.objects.exclude(lease_owner="").exists()


def test_requests_approved_together_are_queued_one_job_per_batch(
    engine_world, engine_sandbox, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    ApprovalRule.objects.create(
        position=0,
        name="by-hand",
        condition="true",
        outcome=PolicyOutcome.REQUIRE,
        approver_role=ApproverRole.PLATFORM_ADMIN,
    )
    waiting = submitted_many(engine_world, 3)
    assert {r.state for r in waiting} == {RequestState.SUBMITTED}
    queued: list[list[int]] = []
    monkeypatch.setattr(
        tasks.converge,
        "delay",
        lambda request_id, companions=(): queued.append([request_id, *companions]),
    )

    with django_capture_on_commit_callbacks(execute=True):
        services.approve_together(
            decisions=[(r.pk, review(r).digest) for r in waiting], approver=engine_world["admin"]
        )

    first, second, third = (r.pk for r in waiting)
    assert queued == [[first, second], [third]]


def test_a_job_takes_the_requests_queued_with_it_before_older_ones(
    engine_world, engine_sandbox, settings
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    older, leader, queued_with_it = approved_many(engine_world, 3)

    reconcile.converge_batch(request_id=leader.pk, worker=WORKER, companions=(queued_with_it.pk,))

    assert states_of(older, leader, queued_with_it) == [
        RequestState.APPROVED,
        RequestState.READY,
        RequestState.READY,
    ]


def test_only_requests_that_create_are_batched_by_cluster(engine_world, engine_sandbox, settings):
    settings.BERTH_PROVISION_BATCH_MAX = 10
    one, two, elsewhere = approved_many(engine_world, 3)
    Request.objects.filter(pk=elsewhere.pk).update(
        payload={**elsewhere.payload, "cluster": "another"}
    )
    converge(one)
    removal = services.submit_request(
        tenant=engine_world["tenant"],
        kind="decommission",
        requester=engine_world["developer"],
        payload={"namespace": "payments-app0-dev", "reason": "x"},
    )

    assert reconcile.batches_of([one.pk, two.pk, elsewhere.pk, removal.pk]) == [
        [one.pk, two.pk],
        [elsewhere.pk],
        [removal.pk],
    ]


def test_a_request_whose_plan_cannot_be_rendered_fails_alone_saying_why(
    engine_world, engine_sandbox
):
    first, broken, last = approved_many(engine_world, 3)
    # Its tier is gone: nothing it asked for can be rendered.
    Request.objects.filter(pk=broken.pk).update(payload={**broken.payload, "tier": "gone"})

    converge(first)

    assert states_of(first, broken, last) == [
        RequestState.READY,
        RequestState.FAILED,
        RequestState.READY,
    ]
    assert "Its plan could not be rendered, nothing was applied" in broken.status_message
    assert broken.runs.get().state == RunState.FAILED


def test_a_job_whose_first_request_another_batch_took_still_provisions_the_rest(
    engine_world, engine_sandbox, settings
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    first, second, third = approved_many(engine_world, 3)
    converge(first)  # takes the oldest one waiting with it: the second
    assert Request.objects.get(pk=second.pk).state == RequestState.READY

    # The job queued for the second and the third: the second is done, the third leads.
    assert tasks.converge(second.pk, [third.pk]) == "nothing to do: request is ready"

    assert Request.objects.get(pk=third.pk).state == RequestState.READY
