"""What the provisioner saw in the world, recorded as it stands: each namespace's drift and
each tenant's truth table."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants.models import (
    Namespace,
    Tenant,
    TruthTable,
)


def record_drift(*, namespace: Namespace, findings: list[dict[str, Any]]) -> None:
    namespace.drift = findings
    namespace.drift_checked_at = timezone.now()
    namespace.save(update_fields=["drift", "drift_checked_at"])


def record_object_drift(*, namespace_id: int, ref: str, finding: dict[str, Any] | None) -> bool:
    """One object's finding (None: it matches its plan again) in its namespace's drift, as
    the watcher sees each object on its own; True when what was recorded changed."""
    with transaction.atomic():
        namespace = Namespace.objects.select_for_update().filter(pk=namespace_id).first()
        if namespace is None:
            return False
        before = list(namespace.drift or [])
        after = [each for each in before if each.get("object") != ref]
        if finding is not None:
            after.append(finding)
            after.sort(key=lambda each: each.get("object", ""))
        namespace.drift = after
        namespace.drift_checked_at = timezone.now()
        namespace.save(update_fields=["drift", "drift_checked_at"])
        return after != before


def record_truth(*, tenant: Tenant, table: dict[str, Any]) -> None:
    TruthTable.objects.update_or_create(
        tenant=tenant,
        defaults={
            "taken_at": table["taken_at"],
            "rows": table["rows"],
            "counts": table["counts"],
            "problems": table["problems"],
        },
    )
