"""Writing audit events. Every service that changes something calls `record`."""

from __future__ import annotations

from typing import Any

from django.db import models

from tenants.models import AuditEvent, User

SYSTEM_ACTOR = "system"


def record(
    *,
    actor: User | None,
    action: str,
    obj: models.Model,
    tenant_id: int | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    source_ip: str | None = None,
) -> AuditEvent:
    return AuditEvent.objects.create(
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
