"""A tenant's budget and the live namespaces that use it, written straight to the database."""

from __future__ import annotations

from tenants.choices import NamespaceState
from tenants.models import Namespace, Tenant
from tests.support.factories import ClusterFactory, TierFactory


def set_budget(tenant: Tenant, **limits: int) -> Tenant:
    Tenant.objects.filter(pk=tenant.pk).update(**{f"budget_{k}": v for k, v in limits.items()})
    tenant.refresh_from_db()
    return tenant


def live_namespace(
    tenant: Tenant,
    name: str,
    *,
    state: str = NamespaceState.ACTIVE,
    cpu_millis: int,
    memory_mib: int,
    storage_gib: int = 0,
) -> Namespace:
    return Namespace.objects.create(
        name=f"{tenant.slug}-{name}",
        tenant=tenant,
        tier=TierFactory(),
        cluster=ClusterFactory(),
        cpu_millis=cpu_millis,
        memory_mib=memory_mib,
        storage_gib=storage_gib,
        state=state,
    )
