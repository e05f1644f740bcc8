"""Hibernation as the engine saw it: a namespace's sleep schedule once its request's run is
Ready, and whether its cluster holds it asleep (`asleep`, `slept_at`) once the reconcile put
it to sleep or woke it, with showback's allocations and the audit log told."""

from __future__ import annotations

from datetime import time
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit
from tenants.models import Cluster, Namespace, Request
from tenants.services import allocations


def record_schedule(tenancy_request: Request) -> Namespace | None:
    """A sleep request's schedule, now the namespace's."""
    payload = tenancy_request.payload
    namespace = (
        Namespace.objects.filter(
            tenant=tenancy_request.tenant,
            name=payload["namespace"],
            cluster__name=payload["cluster"],
        )
        .exclude(state="decommissioned")
        .first()
    )
    if namespace is None:
        return None
    namespace.sleep_mode = payload["mode"]
    namespace.sleep_weekdays = payload.get("sleep_weekdays", "")
    namespace.sleep_at = _time(payload.get("sleep_at"))
    namespace.wake_at = _time(payload.get("wake_at"))
    namespace.sleep_time_zone = payload.get("sleep_time_zone") or "UTC"
    namespace.save(
        update_fields=["sleep_mode", "sleep_weekdays", "sleep_at", "wake_at", "sleep_time_zone"]
    )
    return namespace


def _time(text: str | None) -> time | None:
    return time.fromisoformat(text) if text else None


@transaction.atomic
def record_sleep_state(
    namespace: Namespace, *, asleep: bool, changes: list[dict[str, Any]], causes: list[str]
) -> None:
    """The namespace's workloads (or its kube-green schedule's engines) are now asleep or
    awake on its cluster: recorded once per change, with what was touched."""
    now = timezone.now()
    updated = Namespace.objects.filter(pk=namespace.pk, asleep=not asleep).update(
        asleep=asleep, slept_at=now if asleep else None
    )
    namespace.asleep, namespace.slept_at = asleep, now if asleep else None
    if not updated:
        return
    allocations.record_sleep([namespace], asleep=asleep, at=now)
    audit.record(
        actor=None,
        action="namespace.slept" if asleep else "namespace.woke",
        obj=namespace,
        tenant_id=namespace.tenant_id,
        after={"causes": causes, "changes": changes},
    )


def record_kube_green(cluster: Cluster, found: bool) -> bool:
    """What discovery found of kube-green on the cluster; whether that changed."""
    changed = (
        Cluster.objects.filter(pk=cluster.pk)
        .exclude(has_kube_green=found)
        .update(has_kube_green=found)
    )
    cluster.has_kube_green = found
    return bool(changed)
