"""Audit events for the audit log's tests: many at once, in the order they are made."""

from __future__ import annotations

from tenants.models import AuditEvent, Tenant


def notes(count: int, *, tenant: Tenant | None = None) -> list[AuditEvent]:
    """`count` events `tenant.note`, numbered 0 up in object_id and object_repr."""
    return AuditEvent.objects.bulk_create(
        AuditEvent(
            actor_label="pat",
            action="tenant.note",
            object_type="t",
            object_id=str(index),
            object_repr=f"note {index}",
            tenant=tenant,
        )
        for index in range(count)
    )
