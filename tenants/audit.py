"""Writing audit events. Every service that changes something calls `record` (or, for
several objects changed together, `record_all` of `event`s)."""

from __future__ import annotations

from typing import Any

from django.db import models

from tenants.models import AuditEvent, User

SYSTEM_ACTOR = "system"


def event(
    *,
    actor: User | None,
    action: str,
    obj: models.Model,
    tenant_id: int | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    source_ip: str | None = None,
) -> AuditEvent:
    """An audit event, not written yet."""
    return AuditEvent(
        actor=actor,
        actor_label=actor.username if actor is not None else SYSTEM_ACTOR,
        action=action,
        object_type=obj._meta.label_lower,
        object_id=str(obj.pk),
        object_repr=str(obj)[:255],
        tenant_id=tenant_id,
        before=before,
        after=after,
        source_ip=source_ip,
    )


def record(*, actor: User | None, action: str, obj: models.Model, **details: Any) -> AuditEvent:
    """An `event` (with its tenant_id, before, after, source_ip), written at once."""
    written = event(actor=actor, action=action, obj=obj, **details)
    written.save()
    return written


def record_all(events: list[AuditEvent]) -> None:
    """Several events in one statement, in the order given."""
    AuditEvent.objects.bulk_create(events)
