"""Per-kind validation of request payloads, shared by web forms and the REST API.

Each kind has a serializer that checks shape and the tenant's own limits and returns a
normalised payload (quantities as integers in Berth's units, references by slug/name).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.choices import RequestKind
from tenants.models import Tenant
from tenants.payloads.base import TenantScoped
from tenants.payloads.environments import EndEnvironmentPayload, EphemeralPayload
from tenants.payloads.fields import APP_NAME_MAX, TtlField
from tenants.payloads.namespaces import (
    DecommissionPayload,
    EnvironmentPayload,
    NamespacePayload,
    ProjectPayload,
    QuotaChangePayload,
)
from tenants.payloads.tenancy import (
    ProjectDecommissionPayload,
    TenantDecommissionPayload,
    TenantSyncPayload,
)

__all__ = ["APP_NAME_MAX", "PAYLOADS", "TtlField", "validate_payload"]

PAYLOADS: dict[str, type[TenantScoped]] = {
    RequestKind.NAMESPACE: NamespacePayload,
    RequestKind.PROJECT: ProjectPayload,
    RequestKind.ENVIRONMENT: EnvironmentPayload,
    RequestKind.QUOTA_CHANGE: QuotaChangePayload,
    RequestKind.DECOMMISSION: DecommissionPayload,
    RequestKind.EPHEMERAL: EphemeralPayload,
    RequestKind.END_ENVIRONMENT: EndEnvironmentPayload,
    RequestKind.TENANT_SYNC: TenantSyncPayload,
    RequestKind.PROJECT_DECOMMISSION: ProjectDecommissionPayload,
    RequestKind.TENANT_DECOMMISSION: TenantDecommissionPayload,
}


def validate_payload(*, kind: str, tenant: Tenant, payload: dict[str, Any]) -> dict[str, Any]:
    """Return the normalised payload or raise rest_framework's ValidationError by field."""
    if kind not in PAYLOADS:
        raise serializers.ValidationError({"kind": f"Unknown request kind {kind!r}."})
    serializer = PAYLOADS[kind](data=payload, tenant=tenant)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
