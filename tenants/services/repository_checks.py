"""The repository check's record on the tenant: queued (pending), then answered by a worker.

A check is asked for after onboarding and after a change of the repository settings; the
answer of an older check never overwrites a newer one's (each answer names the check it
answers by when it was queued)."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from tenants.models import Tenant


def queue_repository_check(*, tenant: Tenant) -> datetime:
    """Mark the tenant's repository check pending; returns what names this check."""
    queued_at = timezone.now()
    Tenant.objects.filter(pk=tenant.pk).update(
        repository_check_queued_at=queued_at,
        repository_check_ok=None,
        repository_check_message="",
        repository_checked_at=None,
    )
    tenant.repository_check_queued_at, tenant.repository_check_ok = queued_at, None
    tenant.repository_check_message, tenant.repository_checked_at = "", None
    return queued_at


def record_repository_check(
    *, tenant_id: int, queued_at: datetime, ok: bool | None, message: str
) -> bool:
    """Store a check's answer (None: no answer, the message says why), unless a newer check
    was queued meanwhile (then False)."""
    return (
        Tenant.objects.filter(pk=tenant_id, repository_check_queued_at=queued_at).update(
            repository_check_ok=ok,
            repository_check_message=message,
            repository_checked_at=timezone.now(),
        )
        == 1
    )
