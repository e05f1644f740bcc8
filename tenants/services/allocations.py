"""Showback's history, written where cost moves: a namespace Ready, its quota changed,
hibernated or woken, gone. The engine records these as it finishes a run
(provisioning.records.outcomes); tenants.charging prices what is recorded."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from tenants.choices import AllocationChange
from tenants.models import Allocation, Namespace

Quota = tuple[int, int, int]  # millicores, MiB, GiB


def record_held(
    namespaces: list[Namespace],
    *,
    at: datetime | None = None,
    before: dict[int, Quota] | None = None,
) -> None:
    """These namespaces are Ready holding their quota now: an allocation opens for each that
    held nothing, and one whose quota changed closes and a new one opens at the same
    instant, asleep if the namespace is (a quota changed while it sleeps is still charged
    asleep). A namespace whose quota is unchanged is left as it is. `before`, when the caller
    knows it (the engine does), is what each held until now (absent: nothing), which spares
    reading the open allocations."""
    at = at or timezone.now()
    with transaction.atomic(savepoint=False):
        if before is None:
            before = {
                allocation.namespace_id: _quota(allocation)
                for allocation in Allocation.objects.select_for_update().filter(
                    namespace__in=[namespace.pk for namespace in namespaces],
                    ended_at__isnull=True,
                )
            }
        changed, opened = [], []
        for namespace in namespaces:
            quota = (namespace.cpu_millis, namespace.memory_mib, namespace.storage_gib)
            held = before.get(namespace.pk)
            if held == quota:
                continue
            if held is not None:
                changed.append(namespace.pk)
            opened.append(
                Allocation(
                    namespace=namespace,
                    tenant_id=namespace.tenant_id,
                    cluster_id=namespace.cluster_id,
                    cpu_millis=quota[0],
                    memory_mib=quota[1],
                    storage_gib=quota[2],
                    started_at=at,
                    started_by=AllocationChange.QUOTA if held else AllocationChange.READY,
                    asleep=namespace.asleep,
                )
            )
        if changed:
            record_released(changed, at=at, why=AllocationChange.QUOTA)
        Allocation.objects.bulk_create(opened)


def record_released(
    namespace_ids: list[int],
    *,
    at: datetime | None = None,
    why: str = AllocationChange.DECOMMISSIONED,
) -> int:
    """These namespaces stopped holding their quota (gone, or asleep): their open
    allocations end. Returns how many ended."""
    return Allocation.objects.filter(namespace__in=namespace_ids, ended_at__isnull=True).update(
        ended_at=at or timezone.now(), ended_by=why
    )


def _quota(allocation: Allocation) -> Quota:
    return (allocation.cpu_millis, allocation.memory_mib, allocation.storage_gib)


def record_sleep(namespaces: list[Namespace], *, asleep: bool, at: datetime | None = None) -> None:
    """These namespaces went to sleep (or woke) at `at`: each one's open allocation ends and
    one of the same quota opens at the same instant, marked asleep or not, so the hours on
    either side are priced at their own rates (tenants.charging)."""
    at = at or timezone.now()
    why = AllocationChange.HIBERNATED if asleep else AllocationChange.WOKEN
    with transaction.atomic(savepoint=False):
        open_ones = list(
            Allocation.objects.select_for_update().filter(
                namespace__in=[namespace.pk for namespace in namespaces],
                ended_at__isnull=True,
            )
        )
        changing = [allocation for allocation in open_ones if allocation.asleep != asleep]
        Allocation.objects.filter(pk__in=[a.pk for a in changing]).update(ended_at=at, ended_by=why)
        Allocation.objects.bulk_create(
            Allocation(
                namespace_id=held.namespace_id,
                tenant_id=held.tenant_id,
                cluster_id=held.cluster_id,
                cpu_millis=held.cpu_millis,
                memory_mib=held.memory_mib,
                storage_gib=held.storage_gib,
                started_at=at,
                started_by=why,
                asleep=asleep,
            )
            for held in changing
        )
