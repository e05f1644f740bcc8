"""What the tests of the provisioning engine share (tests/provisioning/jobs/test_engine_*.py):
requests submitted and approved in the engine's world (the `engine_world` fixture of
tests/provisioning/jobs/conftest.py), and one worker's converge of them.

A module imports `engine_sandbox_as_sandbox` and `engine_world_as_world` to name the engine's
fixtures as its `sandbox` and `world`, which are the GitOps loop's elsewhere in the folder."""

from __future__ import annotations

import pytest

from tenants import services
from tenants.models import Request, Tenant
from tests.support import workflow
from tests.support.workflow import approve_if_needed


@pytest.fixture(name="sandbox")
def engine_sandbox_as_sandbox(engine_sandbox):
    """The engine's stand-in (conftest.py), not the GitOps loop's."""
    return engine_sandbox


@pytest.fixture(name="world")
def engine_world_as_world(engine_world):
    """The engine's world (conftest.py): no GitOps repository, the commit step is skipped."""
    return engine_world


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
