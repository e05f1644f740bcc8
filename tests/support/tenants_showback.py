"""Helpers the showback tests (tests/tenants/test_showback*.py) share: the prices and the
clock they use, a namespace made at a given time, and a tenant's costs read through the
API."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace
from tests.support.api import api

NOW = datetime(2026, 11, 12, 0, 0, tzinfo=UTC)
PRICES = {
    "currency": "EUR",
    "cpu_core_hour": Decimal("0.04"),
    "memory_gib_hour": Decimal("0.005"),
    "storage_gib_month": Decimal("0.10"),
    "namespace_month": Decimal("7.30"),
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
    tier="dev",
    project=None,
    state=NamespaceState.ACTIVE,
    cluster="sandbox",
    **extra,
):
    made = Namespace.objects.create(
        name=name,
        tenant=world.payments,
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
    return made


def costs(world, user=None, **query):
    response = api(user or world.member).get(f"/api/v1/tenants/{world.payments.slug}/costs/", query)
    assert response.status_code == 200, response.content[:500]
    return response.json()
