"""What the provisioning engine does to a namespace it provisioned, against the Kubernetes API
stand-in over real HTTP: a quota change updates the live quota and the record; decommission
deletes the namespace (never one Berth does not own); reconcile reports objects missing,
changed and unexpected, and repairs drift when the tier says so."""

from provisioning import jobs
from provisioning.plan import MANAGED_BY
from tenants.choices import NamespaceState, RequestState
from tenants.models import Namespace
from tests.support.cluster import as_admin
from tests.support.jobs_engine import (
    approved,
)
from tests.support.workflow import converge


def test_decommission_deletes_the_namespace_and_marks_both_requests(engine_world, engine_sandbox):
    created = converge(approved(engine_world))
    decommission = converge(
        approved(
            engine_world,
            kind="decommission",
            namespace="payments-shop-dev",
            reason="project cancelled",
        )
    )

    assert decommission.state == RequestState.READY
    created.refresh_from_db()
    assert created.state == RequestState.DECOMMISSIONED
    assert engine_sandbox.get("Namespace", "payments-shop-prod") is None
    assert not engine_sandbox.objects(namespace="payments-shop-dev")
    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.DECOMMISSIONED


def test_quota_change_updates_the_live_quota_and_the_record(engine_world, engine_sandbox):
    converge(approved(engine_world))
    change = converge(
        approved(
            engine_world,
            kind="quota_change",
            namespace="payments-shop-dev",
            cpu="3",
            memory="4Gi",
            storage="5Gi",
        )
    )

    assert change.state == RequestState.READY
    quota = engine_sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    assert quota["spec"]["hard"]["requests.cpu"] == "3"
    assert Namespace.objects.get(name="payments-shop-dev").cpu_millis == 3000
    outcomes = {step["object"]: step["outcome"] for step in change.runs.get().steps}
    assert outcomes["ResourceQuota/payments-shop-dev/berth-quota"] == "configured"


def test_reconcile_reports_missing_changed_and_unexpected_objects(engine_world, engine_sandbox):
    converge(approved(engine_world))
    namespace = Namespace.objects.get(name="payments-shop-dev")
    namespace.tier.auto_repair_drift = False
    namespace.tier.save()
    quota = engine_sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    as_admin(
        engine_sandbox,
        "DELETE",
        "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/networkpolicies/berth-allow-dns",
    )
    quota["spec"]["hard"]["requests.cpu"] = "64"
    engine_sandbox.upsert(quota)
    engine_sandbox.upsert(
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
    engine_sandbox.upsert(
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

    findings = jobs.sweep_namespace(namespace)

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
    assert engine_sandbox.get("NetworkPolicy", "berth-allow-dns", "payments-shop-dev") is None


def test_reconcile_repairs_drift_when_the_tier_says_so(engine_world, engine_sandbox):
    converge(approved(engine_world))
    namespace = Namespace.objects.get(name="payments-shop-dev")
    assert namespace.tier.auto_repair_drift  # the demo dev tier repairs
    quota = engine_sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    quota["spec"]["hard"]["requests.cpu"] = "64"
    engine_sandbox.upsert(quota)

    findings = jobs.sweep_namespace(namespace)

    assert findings[0]["repaired"] is True
    repaired = engine_sandbox.get("ResourceQuota", "berth-quota", "payments-shop-dev")
    assert repaired["spec"]["hard"]["requests.cpu"] == "1"
    assert jobs.sweep_namespace(namespace) == []


def test_decommission_refuses_a_namespace_berth_does_not_own(engine_world, engine_sandbox):
    converge(approved(engine_world))
    live = engine_sandbox.get("Namespace", "payments-shop-dev")
    live["metadata"]["labels"][MANAGED_BY] = "someone-else"
    engine_sandbox.upsert(live)

    decommission = converge(
        approved(engine_world, kind="decommission", namespace="payments-shop-dev", reason="cleanup")
    )

    assert decommission.state == RequestState.FAILED
    assert "refusing to delete Namespace/payments-shop-dev" in decommission.status_message
    assert engine_sandbox.get("Namespace", "payments-shop-dev") is not None
