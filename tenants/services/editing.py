"""Field-by-field changes of a tenant or a cluster: what changed, for the audit log, with
secrets masked (they are stored encrypted and never shown).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError

from tenants.errors import InvalidInput
from tenants.models import Cluster, Tenant

# Stored encrypted and never shown: the audit log says whether they changed, not what to.
SECRET_FIELDS = frozenset(
    {"gitops_credentials", "webhook_secret", "credentials", "forge_token", "forge_webhook_secret"}
)


def _audit_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_audit_value(item) for item in value]
    if hasattr(value, "_meta"):
        return str(value)
    return value


def apply_changes(
    obj: Tenant | Cluster, changes: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Set plain fields on `obj`; returns the before/after of what changed, secrets masked."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for field, value in changes.items():
        old = getattr(obj, field)
        if old == value:
            continue
        setattr(obj, field, value)
        if field in SECRET_FIELDS:
            before[field], after[field] = "(set)" if old else "", "(set)" if value else ""
        else:
            before[field], after[field] = _audit_value(old), _audit_value(value)
    return before, after


def full_clean(obj: Tenant | Cluster) -> None:
    try:
        obj.full_clean()
    except DjangoValidationError as exc:
        raise InvalidInput.of(exc.message_dict) from exc
