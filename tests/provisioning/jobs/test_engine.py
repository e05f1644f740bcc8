"""The provisioning engine against the Kubernetes API stand-in, over real HTTP."""

from datetime import timedelta

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from provisioning import jobs, tasks
from provisioning.kube import KubeError
from provisioning.plan import GITOPS_SERVICE_ACCOUNT, MANAGED_BY, ref_of
from provisioning.records import applied_objects, leases
from tenants import demo, services
from tenants.choices import (
    ApproverRole,
    GuardrailsMode,
    NamespaceState,
    PolicyOutcome,
    RequestState,
    RunState,
)
from tenants.models import ApprovalRule, AuditEvent, Cluster, Namespace, Request, Tenant, User
from tenants.selectors import review
from tests.support.cluster import as_admin, seed_demo
from tests.support.workflow import approve_if_needed

WORKER = "test-worker"


@pytest.fixture
def sandbox():
    namespaces = (*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES)
    with KubeSandbox(
        termination_seconds=0.2, namespaces=namespaces, crds=upstream_crds()
    ) as running:
        yield running


@pytest.fixture
def world(db, sandbox):
    seed_demo(sandbox)
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
        "cluster": Cluster.objects.get(name="sandbox"),
    }


def approved(world, kind="namespace", **payload) -> Request:
    payload = payload or {
        "app": "shop",
        "tier": "dev",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "2Gi",
        "storage": "5Gi",
    }
    submitted = services.submit_request(
        tenant=world["tenant"], kind=kind, payload=payload, requester=world["developer"]
    )
    return approve_if_needed(submitted, approver=world["admin"])


def converge(tenancy_request: Request) -> Request:
    jobs.converge(request_id=tenancy_request.pk, worker=WORKER)
    tenancy_request.refresh_from_db()
    return tenancy_request


def test_approved_request_is_provisioned_with_every_object_and_becomes_ready(world, sandbox):
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY
    plan = jobs.current_plan(tenancy_request)
    for obj in plan.apply:
        meta = obj["metadata"]
        live = sandbox.get(
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


def test_objects_are_applied_with_field_manager_berth_namespace_first(world, sandbox):
    converge(approved(world))
    writes = [r for r in sandbox.requests() if r["method"] == "PATCH"]
    assert "fieldManager=berth" in writes[0]["query"]
    assert writes[0]["path"].startswith("/api/v1/namespaces/")
    live = sandbox.get("ServiceAccount", GITOPS_SERVICE_ACCOUNT, "payments-shop-dev")
    assert {entry["manager"] for entry in live["metadata"]["managedFields"]} == {"berth"}


def test_reapplying_a_finished_plan_changes_nothing(world, sandbox):
    tenancy_request = converge(approved(world))
    client = jobs.cluster_client(world["cluster"])
    versions = {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in sandbox.objects()}

    # What the run's applies left, as Berth remembered it: nothing moved since.
    plan = jobs.current_plan(tenancy_request).apply
    keys = [(obj["apiVersion"], str(ref_of(obj))) for obj in plan]
    known = applied_objects.applied_versions(cluster=world["cluster"], refs=keys)
    assert set(known) == set(keys)

    outcomes = [
        client.apply(obj, known_version=known[key]).result
        for obj, key in zip(plan, keys, strict=True)
    ]

    assert set(outcomes) == {"unchanged"}
    assert {
        o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in sandbox.objects()
    } == versions


def test_api_answering_500_three_times_then_succeeding_ends_ready_with_attempts(world, sandbox):
    sandbox.inject_faults(status=500, times=3, method="PATCH")

    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY
    steps = tenancy_request.runs.get().steps
    applied = [step for step in steps if step["action"] == "apply"]
    # The three refused applies were tried again, and each step says how often it took.
    assert sum(step["attempts"] for step in applied) == len(applied) + 3
    assert {step["outcome"] for step in applied} == {"created"}


def test_validation_error_fails_fast_with_the_api_message(world, sandbox):
    sandbox.inject_faults(
        status=422,
        times=1,
        method="PATCH",
        message="ResourceQuota is invalid: spec.hard: bad quantity",
    )
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.FAILED
    run = tenancy_request.runs.get()
    failed = [step for step in run.steps if step["outcome"] == "failed"]
    assert len(failed) == 1 and failed[0]["attempts"] == 1
    assert "bad quantity" in failed[0]["message"]
    assert "bad quantity" in tenancy_request.status_message
    assert run.state == RunState.FAILED


def test_persistent_server_errors_make_the_request_wait_then_it_resumes_by_itself(
    world, sandbox, settings, monkeypatch
):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    handed_out: list[int] = []
    monkeypatch.setattr(
        tasks.converge,
        "delay",  # the broker's part
        lambda request_id, companions=(): handed_out.append(request_id),
    )
    # The API answers 503 to every apply until it comes back (below).
    sandbox.inject_faults(status=503, times=10_000, method="PATCH")
    tenancy_request = converge(approved(world))
    sandbox.clear_faults()

    assert tenancy_request.state == RequestState.PROVISIONING  # not failed: waiting
    assert tenancy_request.waiting_since is not None
    assert tenancy_request.next_try_at > tenancy_request.waiting_since
    assert "503" in tenancy_request.wait_reason
    first = tenancy_request.runs.get().steps[0]
    assert first["outcome"] == "pending"  # the next try starts there
    # Nobody takes it before its time: a worker asking now is told it is busy.
    assert jobs.converge(request_id=tenancy_request.pk, worker="other").startswith("busy")

    tasks.sweep.run()
    assert handed_out == []  # not before its time
    Request.objects.filter(pk=tenancy_request.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    tasks.sweep.run()
    assert handed_out == [tenancy_request.pk]  # then the sweep hands it out
    tenancy_request = converge(tenancy_request)  # what the worker does with it

    assert tenancy_request.state == RequestState.READY
    assert tenancy_request.runs.count() == 1  # the same run, resumed
    assert tenancy_request.waiting_since is None and tenancy_request.wait_reason == ""


def test_unreachable_cluster_waits_with_a_message_that_names_no_address(world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    Cluster.objects.filter(pk=world["cluster"].pk).update(api_url="http://127.0.0.1:9")
    tenancy_request = converge(approved(world))
    assert tenancy_request.state == RequestState.PROVISIONING
    assert "cluster unreachable" in tenancy_request.wait_reason
    assert "refused the connection" in tenancy_request.wait_reason
    assert "127.0.0.1" not in tenancy_request.wait_reason
    assert ":9" not in tenancy_request.wait_reason
    # The requester sees the same over the API.
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(world["developer"])
    shown = api.get(f"/api/v1/requests/{tenancy_request.pk}/").json()
    assert shown["state"] == "provisioning"
    assert shown["wait_reason"] == tenancy_request.wait_reason
    assert shown["waiting_since"] and shown["next_try_at"]


def test_an_outage_past_the_deadline_fails_the_request_with_the_reason(world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    Cluster.objects.filter(pk=world["cluster"].pk).update(api_url="http://127.0.0.1:9")
    tenancy_request = converge(approved(world))
    deadline = timedelta(seconds=settings.BERTH_OUTAGE_DEADLINE_SECONDS)
    Request.objects.filter(pk=tenancy_request.pk).update(
        waiting_since=timezone.now() - deadline, lease_expires_at=timezone.now()
    )

    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.FAILED
    assert "cluster unreachable" in tenancy_request.status_message
    assert "gave up after waiting since" in tenancy_request.status_message
    assert tenancy_request.waiting_since is None


def test_a_cluster_back_after_an_outage_is_provisioned_without_anyone_pressing_retry(
    world, sandbox, settings
):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    sandbox.stop()
    tenancy_request = converge(approved(world))
    assert tenancy_request.state == RequestState.PROVISIONING and tenancy_request.waiting_since

    sandbox.start()  # same port, same objects: the cluster is back
    Request.objects.filter(pk=tenancy_request.pk).update(lease_expires_at=timezone.now())
    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.READY
    assert sandbox.get("Namespace", "payments-shop-dev") is not None


def test_an_unusable_kubeconfig_fails_at_once_saying_who_fixes_it(world):
    Cluster.objects.filter(pk=world["cluster"].pk).update(
        auth_method="kubeconfig", credentials="clusters: [not, a, kubeconfig"
    )
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.FAILED
    assert "a platform admin must correct the cluster" in tenancy_request.status_message
    assert tenancy_request.waiting_since is None


def test_an_http_url_to_an_https_api_server_fails_at_once_saying_what_to_fix(world):
    with KubeSandbox(tls=True) as https_only:
        Cluster.objects.filter(pk=world["cluster"].pk).update(
            api_url=https_only.url.replace("https://", "http://")
        )
        tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.FAILED, tenancy_request.wait_reason
    assert "must start with https://" in tenancy_request.status_message
    assert str(https_only.port) not in tenancy_request.status_message


def test_plan_changed_after_approval_returns_the_request_to_approval(world, sandbox):
    # Prod needs a person's approval, and a person approves a plan (its digest).
    tenancy_request = approved(
        world, app="shop", tier="prod", cluster="sandbox", cpu="1", memory="2Gi"
    )
    world["tenant"].member_groups = ["payments-devs", "payments-contractors"]
    world["tenant"].save()

    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.SUBMITTED
    assert "moved after approval" in tenancy_request.status_message
    assert sandbox.get("Namespace", "payments-shop-prod") is None


def test_a_second_worker_does_not_provision_a_request_under_lease(world, sandbox):
    tenancy_request = approved(world)
    assert leases.acquire_lease(request_id=tenancy_request.pk, owner="other", seconds=60)

    result = jobs.converge(request_id=tenancy_request.pk, worker=WORKER)

    assert result.startswith("busy")
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED
    assert not sandbox.requests()


def test_decommission_deletes_the_namespace_and_marks_both_requests(world, sandbox):
    created = converge(approved(world))
    decommission = converge(
        approved(
            world, kind="decommission", namespace="payments-shop-dev", reason="project cancelled"
        )
    )

    assert decommission.state == RequestState.READY
    created.refresh_from_db()
    assert created.state == RequestState.DECOMMISSIONED
    assert sandbox.get("Namespace", "payments-shop-prod") is None
    assert not sandbox.objects(namespace="payments-shop-dev")
    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.DECOMMISSIONED


def test_quota_change_updates_the_live_quota_and_the_record(world, sandbox):
    converge(approved(world))
    change = converge(
        approved(
            world,
            kind="quota_change",
            namespace="payments-shop-dev",
            cpu="3",
            memory="4Gi",
            storage="5Gi",
        )
    )

    assert change.state == RequestState.READY
    quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    assert quota["spec"]["hard"]["requests.cpu"] == "3"
    assert Namespace.objects.get(name="payments-shop-dev").cpu_millis == 3000
    outcomes = {step["object"]: step["outcome"] for step in change.runs.get().steps}
    assert outcomes["ResourceQuota/payments-shop-dev/berth-quota"] == "configured"


def test_plan_only_cluster_applies_nothing(world, sandbox):
    Cluster.objects.filter(pk=world["cluster"].pk).update(plan_only=True)
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY
    assert {step["outcome"] for step in tenancy_request.runs.get().steps} == {"skipped"}
    assert not [r for r in sandbox.requests() if r["method"] != "GET"]


def test_reconcile_reports_missing_changed_and_unexpected_objects(world, sandbox):
    converge(approved(world))
    namespace = Namespace.objects.get(name="payments-shop-dev")
    namespace.tier.auto_repair_drift = False
    namespace.tier.save()
    quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    as_admin(
        sandbox,
        "DELETE",
        "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/networkpolicies/berth-allow-dns",
    )
    quota["spec"]["hard"]["requests.cpu"] = "64"
    sandbox.upsert(quota)
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "stray",
                "namespace": "payments-shop-dev",
                "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
            },
        }
    )
    sandbox.upsert(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": "berth-leftover",
                "namespace": "payments-shop-dev",
                "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
            },
            "spec": {"podSelector": {}},
        }
    )

    findings = jobs.reconcile_namespace(namespace)

    by_object = {f["object"]: f for f in findings}
    assert by_object["NetworkPolicy/payments-shop-dev/berth-allow-dns"]["status"] == "missing"
    assert by_object["ResourceQuota/payments-shop-dev/berth-quota"]["status"] == "changed"
    assert (
        "spec.hard.requests.cpu"
        in by_object["ResourceQuota/payments-shop-dev/berth-quota"]["detail"]
    )
    assert by_object["NetworkPolicy/payments-shop-dev/berth-leftover"]["status"] == "unexpected"
    namespace.refresh_from_db()
    assert namespace.drift == findings and namespace.drift_checked_at is not None
    assert sandbox.get("NetworkPolicy", "berth-allow-dns", "payments-shop-dev") is None


def test_reconcile_repairs_drift_when_the_tier_says_so(world, sandbox):
    converge(approved(world))
    namespace = Namespace.objects.get(name="payments-shop-dev")
    assert namespace.tier.auto_repair_drift  # the demo dev tier repairs
    quota = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    quota["spec"]["hard"]["requests.cpu"] = "64"
    sandbox.upsert(quota)

    findings = jobs.reconcile_namespace(namespace)

    assert findings[0]["repaired"] is True
    repaired = sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    assert repaired["spec"]["hard"]["requests.cpu"] == "1"
    assert jobs.reconcile_namespace(namespace) == []


@pytest.mark.parametrize("auth_method", ["token", "kubeconfig"])
def test_cluster_credentials_reach_a_cluster_that_requires_a_token(db, auth_method):
    namespaces = (*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES)
    with KubeSandbox(
        token="cluster-token-123", namespaces=namespaces, crds=upstream_crds()
    ) as secured:
        demo.seed(sandbox_api_url=secured.url)
        credentials = {
            "token": "cluster-token-123",
            "kubeconfig": yaml.safe_dump(secured.kubeconfig()),
        }[auth_method]
        cluster = Cluster.objects.get(name="sandbox")
        cluster.auth_method, cluster.credentials = auth_method, credentials
        # Berth is this stand-in's admin, whom Berth's guardrails would not exempt.
        cluster.guardrails = GuardrailsMode.EXTERNAL
        cluster.save()
        world = {
            "tenant": Tenant.objects.get(slug="payments"),
            "developer": User.objects.get(username="dev"),
            "admin": User.objects.get(username="pat"),
        }

        tenancy_request = converge(approved(world))

        assert tenancy_request.state == RequestState.READY
        assert secured.get("Namespace", "payments-shop-dev") is not None


def test_wrong_cluster_token_fails_fast_with_unauthorized(db):
    with KubeSandbox(token="right-token") as secured:
        demo.seed(sandbox_api_url=secured.url)
        cluster = Cluster.objects.get(name="sandbox")
        cluster.credentials = "wrong-token"
        cluster.save()
        with pytest.raises(KubeError) as refused:
            jobs.cluster_client(cluster).version()
    assert refused.value.status == 401
    assert refused.value.attempts == 1


def test_decommission_refuses_a_namespace_berth_does_not_own(world, sandbox):
    converge(approved(world))
    live = sandbox.get("Namespace", "payments-shop-dev")
    live["metadata"]["labels"][MANAGED_BY] = "someone-else"
    sandbox.upsert(live)

    decommission = converge(
        approved(world, kind="decommission", namespace="payments-shop-dev", reason="cleanup")
    )

    assert decommission.state == RequestState.FAILED
    assert "refusing to delete Namespace/payments-shop-dev" in decommission.status_message
    assert sandbox.get("Namespace", "payments-shop-dev") is not None


# Database work per provisioned request does not grow with the bundle: a request for three
# environments costs the worker the same queries as one for a single environment, and the
# applies are one API call per object.
def provision_counting_queries(request_id: int) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        jobs.converge(request_id=request_id, worker=WORKER)
    return len(captured), [query["sql"] for query in captured]


def approved_project(world, app: str, tiers: list[str]):
    return approved(world, kind="project", app=app, engine="argocd", cluster="sandbox", tiers=tiers)


def test_queries_per_provisioned_request_do_not_grow_with_its_objects(world, sandbox):
    Tenant.objects.filter(pk=world["tenant"].pk).update(
        budget_cpu_millis=100_000,
        budget_memory_mib=200_000,
        budget_namespaces=50,
        budget_storage_gib=1000,
    )
    world["tenant"].refresh_from_db()
    # The tenant's first request also makes the tenant's own objects, and the first to use a
    # tier's definition numbers it: not what is compared.
    jobs.converge(
        request_id=approved_project(world, "warmup", ["dev", "staging", "prod"]).pk, worker=WORKER
    )

    one = approved_project(world, "ledger", ["dev"])
    one_count, one_sql = provision_counting_queries(one.pk)
    three = approved_project(world, "billing", ["dev", "staging", "prod"])
    sandbox.clear_requests()
    three_count, three_sql = provision_counting_queries(three.pk)

    one.refresh_from_db()
    three.refresh_from_db()
    assert (one.state, three.state) == (RequestState.READY, RequestState.READY)
    three_objects = len(jobs.current_plan(three).apply)
    assert three_objects > 2 * len(jobs.current_plan(one).apply)
    assert three_count == one_count, "\n".join(three_sql)
    assert one_count <= 48, "\n".join(one_sql)
    # One server-side apply per object: no read before, none after.
    calls = [r for r in sandbox.requests() if "/api" in r["path"]]
    assert sorted({r["method"] for r in calls}) == ["PATCH"], calls
    assert len(calls) == three_objects


def steps_written(sql: list[str]) -> int:
    """Writes of a run's steps: progress, and the last one as the run closes."""
    return sum(
        query.startswith('UPDATE "tenants_run" SET') and '"steps" =' in query for query in sql
    )


def test_a_quick_plan_writes_its_progress_once_and_a_slow_one_as_it_goes(
    world, sandbox, monkeypatch
):
    from provisioning.jobs import applying

    _, quick_sql = provision_counting_queries(approved(world).pk)
    # Every wave's outcome and the GitOps step's (no repository here) at once, as the run
    # closes.
    assert steps_written(quick_sql) == 1

    # A plan slower than PROGRESS_SECONDS per wave: each wave's outcomes as it ends.
    monkeypatch.setattr(applying, "PROGRESS_SECONDS", 0.0)
    slow = approved(world, app="ledger", tier="dev", cluster="sandbox", cpu="1", memory="2Gi")
    _, slow_sql = provision_counting_queries(slow.pk)
    slow.refresh_from_db()
    assert slow.state == RequestState.READY
    waves = len(applying.apply_waves(jobs.current_plan(slow).apply, lambda obj: obj))
    assert waves > 1
    assert steps_written(slow_sql) == waves + 1


def test_a_plan_stopped_by_a_refused_object_keeps_what_it_applied_before_it(world, sandbox):
    sandbox.inject_faults(
        status=422,
        times=1,
        method="PATCH",
        path_contains="rolebindings",
        message="RoleBinding is invalid",
    )
    tenancy_request = converge(approved(world))

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
    from provisioning.jobs.applying import apply_waves

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


# --- requests approved together are provisioned together ----------------------------------


def submitted_many(world, count: int, prefix: str = "app") -> list[Request]:
    Tenant.objects.filter(pk=world["tenant"].pk).update(
        budget_cpu_millis=100_000, budget_memory_mib=200_000, budget_namespaces=50
    )
    world["tenant"].refresh_from_db()
    return [
        services.submit_request(
            tenant=world["tenant"],
            kind="namespace",
            requester=world["developer"],
            payload={
                "app": f"{prefix}{number}",
                "tier": "dev",
                "cluster": "sandbox",
                "cpu": "100m",
                "memory": "128Mi",
            },
        )
        for number in range(count)
    ]


def approved_many(world, count: int, prefix: str = "app") -> list[Request]:
    return [
        approve_if_needed(submitted, approver=world["admin"])
        for submitted in submitted_many(world, count, prefix)
    ]


def test_requests_approved_together_are_provisioned_together_each_with_its_own_run(world, sandbox):
    batch = approved_many(world, 3)
    sandbox.clear_requests()

    assert jobs.converge(request_id=batch[0].pk, worker=WORKER) == "ready"

    wanted: dict[str, dict] = {}
    for tenancy_request in batch:
        tenancy_request.refresh_from_db()
        assert tenancy_request.state == RequestState.READY
        run = tenancy_request.runs.get()
        assert run.state == RunState.SUCCEEDED
        plan = jobs.current_plan(tenancy_request).apply
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
            sandbox.get(
                obj["kind"], meta["name"], meta.get("namespace"), api_version=obj["apiVersion"]
            )
            is not None
        )
    # The tenant's own objects, alike in the three plans, went out once: one apply each.
    patches = [r for r in sandbox.requests() if r["method"] == "PATCH"]
    assert len(patches) == len(wanted)
    assert sum(r["path"].endswith("/namespaces/payments-apps") for r in patches) == 1


def test_a_refused_object_fails_only_its_own_request_in_a_batch(world, sandbox):
    first, refused, last = approved_many(world, 3)
    sandbox.inject_faults(
        status=422,
        times=1,
        method="PATCH",
        path_contains="namespaces/payments-app1-dev/rolebindings",
        message="RoleBinding is invalid",
    )

    converge(first)

    for tenancy_request in (first, refused, last):
        tenancy_request.refresh_from_db()
    assert (first.state, refused.state, last.state) == (
        RequestState.READY,
        RequestState.FAILED,
        RequestState.READY,
    )
    steps = refused.runs.get().steps
    assert [step["kind"] for step in steps if step["outcome"] == "failed"] == ["RoleBinding"]
    assert "RoleBinding is invalid" in refused.status_message
    assert Namespace.objects.get(request=last).state == NamespaceState.ACTIVE


def test_a_worker_takes_at_most_the_batch_size_and_only_requests_for_its_cluster(
    world, sandbox, settings
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    first, second, third, elsewhere = approved_many(world, 4)
    Request.objects.filter(pk=elsewhere.pk).update(
        payload={**elsewhere.payload, "cluster": "another"}
    )

    converge(first)

    states = [Request.objects.get(pk=r.pk).state for r in (first, second, third, elsewhere)]
    assert states == [
        RequestState.READY,
        RequestState.READY,
        RequestState.APPROVED,
        RequestState.APPROVED,
    ]
    # Nobody holds what the batch did not take.
    assert not Request.objects.exclude(lease_owner="").exists()


def test_the_job_of_a_request_a_batch_already_finished_costs_one_query(world, sandbox):
    first, second = approved_many(world, 2)
    assert tasks.converge(first.pk) == "ready"

    with CaptureQueriesContext(connection) as captured:
        result = tasks.converge(second.pk)

    assert result == "nothing to do: request is ready"
    assert len(captured) == 1


def test_a_batch_costs_the_same_queries_whatever_its_size(world, sandbox, monkeypatch):
    from provisioning.jobs import applying

    # Progress is written every PROGRESS_SECONDS of a run: a busy machine would add a
    # write to the bigger batch. Counted here: what a batch costs, not how long it took.
    monkeypatch.setattr(applying, "PROGRESS_SECONDS", float("inf"))
    converge(approved(world))  # the tenant's first request makes its own objects

    two = approved_many(world, 2, prefix="two")
    two_count, two_sql = provision_counting_queries(two[0].pk)
    six = approved_many(world, 6, prefix="six")
    six_count, six_sql = provision_counting_queries(six[0].pk)

    assert {Request.objects.get(pk=r.pk).state for r in (*two, *six)} == {RequestState.READY}
    # The plans' shared reads, the names and claims, the transitions, runs, outcomes and
    # versions are each one statement for the whole batch.
    assert six_count == two_count, "\n".join(six_sql)


def test_requests_approved_together_are_queued_one_job_per_batch(
    world, sandbox, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    ApprovalRule.objects.create(
        position=0,
        name="by-hand",
        condition="true",
        outcome=PolicyOutcome.REQUIRE,
        approver_role=ApproverRole.PLATFORM_ADMIN,
    )
    waiting = submitted_many(world, 3)
    assert {r.state for r in waiting} == {RequestState.SUBMITTED}
    queued: list[list[int]] = []
    monkeypatch.setattr(
        tasks.converge,
        "delay",
        lambda request_id, companions=(): queued.append([request_id, *companions]),
    )

    with django_capture_on_commit_callbacks(execute=True):
        services.approve_together(
            decisions=[(r.pk, review(r).digest) for r in waiting], approver=world["admin"]
        )

    first, second, third = (r.pk for r in waiting)
    assert queued == [[first, second], [third]]


def test_a_job_takes_the_requests_queued_with_it_before_older_ones(world, sandbox, settings):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    older, leader, queued_with_it = approved_many(world, 3)

    jobs.converge_batch(request_id=leader.pk, worker=WORKER, companions=(queued_with_it.pk,))

    states = [Request.objects.get(pk=r.pk).state for r in (older, leader, queued_with_it)]
    assert states == [RequestState.APPROVED, RequestState.READY, RequestState.READY]


def test_only_requests_that_create_are_batched_by_cluster(world, sandbox, settings):
    settings.BERTH_PROVISION_BATCH_MAX = 10
    one, two, elsewhere = approved_many(world, 3)
    Request.objects.filter(pk=elsewhere.pk).update(
        payload={**elsewhere.payload, "cluster": "another"}
    )
    converge(one)
    removal = services.submit_request(
        tenant=world["tenant"],
        kind="decommission",
        requester=world["developer"],
        payload={"namespace": "payments-app0-dev", "reason": "x"},
    )

    assert jobs.batches_of([one.pk, two.pk, elsewhere.pk, removal.pk]) == [
        [one.pk, two.pk],
        [elsewhere.pk],
        [removal.pk],
    ]


def test_a_request_whose_plan_cannot_be_rendered_fails_alone_saying_why(world, sandbox):
    first, broken, last = approved_many(world, 3)
    # Its tier is gone: nothing it asked for can be rendered.
    Request.objects.filter(pk=broken.pk).update(payload={**broken.payload, "tier": "gone"})

    converge(first)

    for tenancy_request in (first, broken, last):
        tenancy_request.refresh_from_db()
    assert (first.state, broken.state, last.state) == (
        RequestState.READY,
        RequestState.FAILED,
        RequestState.READY,
    )
    assert "Its plan could not be rendered, nothing was applied" in broken.status_message
    assert broken.runs.get().state == RunState.FAILED


def test_a_job_whose_first_request_another_batch_took_still_provisions_the_rest(
    world, sandbox, settings
):
    settings.BERTH_PROVISION_BATCH_MAX = 2
    first, second, third = approved_many(world, 3)
    converge(first)  # takes the oldest one waiting with it: the second
    assert Request.objects.get(pk=second.pk).state == RequestState.READY

    # The job queued for the second and the third: the second is done, the third leads.
    assert tasks.converge(second.pk, [third.pk]) == "nothing to do: request is ready"

    assert Request.objects.get(pk=third.pk).state == RequestState.READY
