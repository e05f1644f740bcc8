"""Where the engine meets showback, against the Kubernetes API stand-in over real HTTP: a
namespace is charged from the run that made it Ready (not from its request), a quota change
starts a new allocation the instant the run applies it, and a decommission ends it."""

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from tenants.choices import AllocationChange
from tenants.models import Allocation, ClusterPrice, Namespace
from tenants.pricing import hourly
from tenants.selectors.costs import tenant_costs
from tenants.services.prices import SINCE_ALWAYS
from tests.support.jobs_engine import approved
from tests.support.workflow import converge

PRICES = {
    "cpu_core_hour": Decimal("0.04"),
    "memory_gib_hour": Decimal("0.005"),
    "storage_gib_month": Decimal("0.10"),
    "namespace_month": Decimal("7.30"),
}


def priced(world) -> None:
    ClusterPrice.objects.create(cluster=world["cluster"], effective_from=SINCE_ALWAYS, **PRICES)


def test_a_namespace_is_charged_from_ready_each_quota_for_its_hours_until_removed(engine_world):
    priced(engine_world)
    created = approved(engine_world)
    # The request waited two days for its approval: its names were claimed then.
    claimed = timezone.now() - timedelta(days=2)
    Namespace.objects.filter(request=created).update(created_at=claimed)
    before_run = timezone.now()
    converge(created)
    namespace = Namespace.objects.get(name="payments-shop-dev")
    [first] = Allocation.objects.filter(namespace=namespace)
    assert first.started_by == AllocationChange.READY and first.started_at >= before_run
    assert (first.cpu_millis, first.memory_mib, first.storage_gib) == (1000, 2048, 5)

    converge(
        approved(
            engine_world,
            kind="quota_change",
            namespace="payments-shop-dev",
            cpu="3",
            memory="4Gi",
            storage="5Gi",
        )
    )
    first.refresh_from_db()
    second = Allocation.objects.get(namespace=namespace, ended_at__isnull=True)
    assert first.ended_by == second.started_by == AllocationChange.QUOTA
    assert first.ended_at == second.started_at
    assert (second.cpu_millis, second.memory_mib) == (3000, 4096)

    converge(approved(engine_world, kind="decommission", namespace="payments-shop-dev", reason="x"))
    second.refresh_from_db()
    assert second.ended_by == AllocationChange.DECOMMISSIONED and second.ended_at is not None

    row = next(
        each
        for each in tenant_costs(engine_world["tenant"]).namespaces
        if each.name == "payments-shop-dev"
    )
    expected = sum(
        hourly(
            cpu_millis=each.cpu_millis,
            memory_mib=each.memory_mib,
            storage_gib=each.storage_gib,
            prices=PRICES,
        )
        * Decimal(str((each.ended_at - each.started_at).total_seconds()))
        / 3600
        for each in (first, second)
    )
    # Exact but for the last of Decimal's 28 digits (the sum is split by day on the page).
    assert row.month.quantize(Decimal("1e-15")) == expected.quantize(Decimal("1e-15"))
    assert row.charged_from == first.started_at > claimed
    assert row.ended_at == second.ended_at
