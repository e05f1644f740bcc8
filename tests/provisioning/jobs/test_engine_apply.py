"""The provisioning engine against the Kubernetes API stand-in, over real HTTP: an approved
request becomes every object of its plan, applied server-side by field manager berth in waves
(the Namespace first, RoleBindings after the Roles they grant), retried on server errors and
stopped at the first refused object; a plan that moved since approval goes back to approval,
a request under another worker's lease is left alone, and a plan-only cluster gets nothing."""

from provisioning import jobs, reconcile
from provisioning.plan import GITOPS_SERVICE_ACCOUNT, MANAGED_BY, ref_of
from provisioning.records import applied_objects, leases
from tenants.choices import NamespaceState, RequestState, RunState
from tenants.conditions import Phase
from tenants.models import Cluster, Namespace
from tests.support.jobs_engine import (
    approved,
)
from tests.support.workflow import WORKER, converge


def test_approved_request_is_provisioned_with_every_object_and_becomes_ready(
    engine_world, engine_sandbox
):
    tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.READY
    plan = reconcile.current_plan(tenancy_request)
    for obj in plan.apply:
        meta = obj["metadata"]
        live = engine_sandbox.get(
            obj["kind"], meta["name"], meta.get("namespace"), api_version=obj["apiVersion"]
        )
        assert live is not None, f"{obj['kind']}/{meta['name']} missing"
        assert live["metadata"]["labels"][MANAGED_BY] == "berth"
        if "spec" in obj:
            assert live["spec"] == obj["spec"]
    run = tenancy_request.runs.get()
    assert run.state == RunState.SUCCEEDED
    # The last step is the GitOps commit: skipped, the demo tenant has no repository here.
    assert [step["outcome"] for step in run.steps] == ["created"] * len(plan.apply) + ["skipped"]
    namespace = Namespace.objects.get(name="payments-shop-dev")
    assert namespace.state == NamespaceState.ACTIVE
    assert namespace.request == tenancy_request


def test_objects_are_applied_with_field_manager_berth_namespace_first(engine_world, engine_sandbox):
    converge(approved(engine_world))
    writes = [r for r in engine_sandbox.requests() if r["method"] == "PATCH"]
    assert "fieldManager=berth" in writes[0]["query"]
    assert writes[0]["path"].startswith("/api/v1/namespaces/")
    live = engine_sandbox.get("ServiceAccount", GITOPS_SERVICE_ACCOUNT, "payments-shop-dev")
    assert {entry["manager"] for entry in live["metadata"]["managedFields"]} == {"berth"}


def test_reapplying_a_finished_plan_changes_nothing(engine_world, engine_sandbox):
    tenancy_request = converge(approved(engine_world))
    client = jobs.cluster_client(engine_world["cluster"])
    versions = {
        o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in engine_sandbox.objects()
    }

    # What the run's applies left, as Berth remembered it: nothing moved since.
    plan = reconcile.current_plan(tenancy_request).apply
    keys = [(obj["apiVersion"], str(ref_of(obj))) for obj in plan]
    known = applied_objects.applied_versions(cluster=engine_world["cluster"], refs=keys)
    assert set(known) == set(keys)

    outcomes = [
        client.apply(obj, known_version=known[key]).result
        for obj, key in zip(plan, keys, strict=True)
    ]

    assert set(outcomes) == {"unchanged"}
    assert {
        o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in engine_sandbox.objects()
    } == versions


def test_api_answering_500_three_times_then_succeeding_ends_ready_with_attempts(
    engine_world, engine_sandbox
):
    engine_sandbox.inject_faults(status=500, times=3, method="PATCH")

    tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.READY
    steps = tenancy_request.runs.get().steps
    applied = [step for step in steps if step["action"] == "apply"]
    # The three refused applies were tried again, and each step says how often it took.
    assert sum(step["attempts"] for step in applied) == len(applied) + 3
    assert {step["outcome"] for step in applied} == {"created"}


def test_validation_error_fails_fast_with_the_api_message(engine_world, engine_sandbox):
    engine_sandbox.inject_faults(
        status=422,
        times=1,
        method="PATCH",
        message="ResourceQuota is invalid: spec.hard: bad quantity",
    )
    tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.FAILED
    run = tenancy_request.runs.get()
    failed = [step for step in run.steps if step["outcome"] == "failed"]
    assert len(failed) == 1 and failed[0]["attempts"] == 1
    assert "bad quantity" in failed[0]["message"]
    assert "bad quantity" in tenancy_request.status_message
    assert run.state == RunState.FAILED


def test_plan_changed_after_approval_returns_the_request_to_approval(engine_world, engine_sandbox):
    # Prod needs a person's approval, and a person approves a plan (its digest).
    tenancy_request = approved(
        engine_world, app="shop", tier="prod", cluster="sandbox", cpu="1", memory="2Gi"
    )
    engine_world["tenant"].member_groups = ["payments-devs", "payments-contractors"]
    engine_world["tenant"].save()

    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.SUBMITTED
    assert "moved after approval" in tenancy_request.status_message
    assert engine_sandbox.get("Namespace", "payments-shop-prod") is None


def test_a_second_worker_does_not_provision_a_request_under_lease(engine_world, engine_sandbox):
    tenancy_request = approved(engine_world)
    assert leases.acquire_lease(request_id=tenancy_request.pk, owner="other", seconds=60)

    result = reconcile.converge(request_id=tenancy_request.pk, worker=WORKER)

    assert result.phase is Phase.BUSY
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED
    assert not engine_sandbox.requests()


def test_plan_only_cluster_applies_nothing(engine_world, engine_sandbox):
    Cluster.objects.filter(pk=engine_world["cluster"].pk).update(plan_only=True)
    tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.READY
    assert {step["outcome"] for step in tenancy_request.runs.get().steps} == {"skipped"}
    assert not [r for r in engine_sandbox.requests() if r["method"] != "GET"]


def test_a_plan_stopped_by_a_refused_object_keeps_what_it_applied_before_it(
    engine_world, engine_sandbox
):
    engine_sandbox.inject_faults(
        status=422,
        times=1,
        method="PATCH",
        path_contains="rolebindings",
        message="RoleBinding is invalid",
    )
    tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.FAILED
    steps = tenancy_request.runs.get().steps
    outcomes = {step["object"]: step["outcome"] for step in steps}
    assert outcomes["Namespace/payments-shop-dev"] == "created"
    assert [step["kind"] for step in steps if step["outcome"] == "failed"] == ["RoleBinding"]
    # Nothing after the refused wave was tried.
    assert {step["outcome"] for step in steps if step["kind"] == "AppProject"} <= {"pending"}


def test_rolebindings_wait_for_the_roles_they_grant():
    """A RoleBinding applied next to its Role can reach the API server first, whose
    escalation check then finds no Role and refuses it (seen as a flaky 403)."""
    from provisioning.reconcile.applying import apply_waves

    kinds = [
        "Namespace",
        "ServiceAccount",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "RoleBinding",
        "AppProject",
    ]
    waves = apply_waves(enumerate(kinds), lambda step: {"kind": step[1]})

    wave_of = {position: index for index, wave in enumerate(waves) for position, _ in wave}
    assert wave_of[0] == 0  # the Namespace alone, first
    assert wave_of[1] == wave_of[2] == wave_of[3] == wave_of[5]  # then together
    assert wave_of[4] == wave_of[6] > wave_of[3]  # RoleBindings after the Roles
    assert wave_of[7] > wave_of[4]
