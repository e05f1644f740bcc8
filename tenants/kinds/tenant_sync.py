"""The tenant's own objects on a cluster, applied again as its records say (Berth asks it
when a tenant's settings change, and it repairs the tenant's GitOps files)."""

from __future__ import annotations

from tenants.choices import RequestKind
from tenants.kinds.base import Kind, Target
from tenants.payloads.tenancy import TenantSyncPayload


class TenantSyncKind(Kind):
    value = RequestKind.TENANT_SYNC
    payload = TenantSyncPayload
    target = Target.CLUSTER


KIND = TenantSyncKind()
