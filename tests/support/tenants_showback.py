"""Helpers the showback tests (tests/tenants/test_showback*.py, test_cost_totals.py) share:
the prices and the clock they use, a namespace made at a given time and one removed at a
given time, and a tenant's costs read through the API."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from tenants.choices import NamespaceState, RequestKind, RequestState
from tenants.models import Cluster, EnvironmentTier, Namespace, Request
from tenants.services import allocations
from tenants.services.prices import SINCE_ALWAYS
from tests.support.api import api

NOW = datetime(2026, 11, 12, 0, 0, tzinfo=UTC)
PRICES = {
    "effective_from": SINCE_ALWAYS,
    "currency": "EUR",
    "cpu_core_hour": Decimal("0.04"),
    "memory_gib_hour": Decimal("0.005"),
    "storage_gib_month": Decimal("0.10"),
    "namespace_month": Decimal("7.30"),
    # A namespace asleep (hibernation): its CPU and memory at these (the defaults).
    "asleep_cpu_core_hour": Decimal(0),
    "asleep_memory_gib_hour": Decimal(0),
}
# 2 cores, 4 GiB, 10 GiB of storage and the namespace itself, per hour, at PRICES.
HOURLY = (
    2 * Decimal("0.04") + 4 * Decimal("0.005") + 10 * Decimal("0.10") / 730 + Decimal("7.30") / 730
)


def namespace(
    world,
    name="payments-shop-dev",
    *,
    created,
    ready=None,
    tier="dev",
    project=None,
    state=NamespaceState.ACTIVE,
    cluster="sandbox",
    tenant=None,
    **extra,
):
    """A namespace claimed at `created` and, unless still waiting, Ready at `ready` (by
    default the same instant), holding 2 cores, 4 GiB and 10 GiB from then on."""
    made = Namespace.objects.create(
        name=name,
        tenant=tenant or world.payments,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name=cluster),
        project=project,
        cpu_millis=2000,
        memory_mib=4096,
        storage_gib=10,
        state=state,
        **extra,
    )
    Namespace.objects.filter(pk=made.pk).update(created_at=created)
    if state not in (NamespaceState.REQUESTED, NamespaceState.PENDING):
        allocations.record_held([made], at=ready or created)
    return made


def removed(world, gone: Namespace, *, finished: datetime) -> None:
    """`gone`'s decommission, finished at `finished` (where showback stops counting it)."""
    Request.objects.create(
        tenant=gone.tenant,
        kind=RequestKind.DECOMMISSION,
        payload={"namespace": gone.name},
        requester=world.member,
        state=RequestState.DECOMMISSIONED,
    )
    allocations.record_released([gone.pk], at=finished)


def costs(world, user=None, **query):
    response = api(user or world.member).get(f"/api/v1/tenants/{world.payments.slug}/costs/", query)
    assert response.status_code == 200, response.content[:500]
    return response.json()
