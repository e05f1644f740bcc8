"""A tenant leaving a cluster: every namespace it has there, and its own objects."""

from __future__ import annotations

from typing import Any

from tenants.choices import RequestKind
from tenants.kinds.base import Kind, Target
from tenants.models import Namespace
from tenants.payloads.tenancy import TenantDecommissionPayload


class TenantDecommissionKind(Kind):
    value = RequestKind.TENANT_DECOMMISSION
    payload = TenantDecommissionPayload
    target = Target.CLUSTER
    deduplicated_by = ("cluster",)
    decommissions = True
    removes_namespaces = True

    def removes(self, payload: dict[str, Any], namespace: Namespace) -> bool:
        return payload.get("cluster") == namespace.cluster.name


KIND = TenantDecommissionKind()
