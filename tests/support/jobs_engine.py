"""What the tests of the provisioning engine share (tests/provisioning/jobs/test_engine_*.py):
requests submitted and approved in the engine's world (the `engine_world` fixture of
tests/provisioning/jobs/conftest.py), and one worker's converge of them.

"""

from __future__ import annotations

from tenants import services
from tenants.models import Request, Tenant
from tests.support import workflow
from tests.support.workflow import approve_if_needed


def approved(world, kind="namespace", **payload) -> Request:
    """The workflow's approved request; the engine's shop asks for storage too."""
    return workflow.approved(world, kind, **(payload or {**workflow.SHOP, "storage": "5Gi"}))


def states_of(*requests: Request) -> list[str]:
    """The requests' states now, each refreshed from the database."""
    for tenancy_request in requests:
        tenancy_request.refresh_from_db()
    return [tenancy_request.state for tenancy_request in requests]


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
