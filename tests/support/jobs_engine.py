"""What the tests of the provisioning engine share (tests/provisioning/jobs/test_engine_*.py):
requests submitted and approved in the engine's world (the `engine_world` fixture of
tests/provisioning/jobs/conftest.py), and one worker's converge of them."""

from __future__ import annotations

from provisioning import jobs
from tenants import services
from tenants.models import Request, Tenant
from tests.support.workflow import approve_if_needed

WORKER = "test-worker"


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
