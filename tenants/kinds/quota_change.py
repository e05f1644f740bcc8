"""A live namespace's quota, changed."""

from __future__ import annotations

from typing import Any

from tenants.budget import Usage, increase
from tenants.choices import NamespaceState, RequestKind
from tenants.kinds.base import Kind, Target
from tenants.models import Namespace, Tenant
from tenants.payloads.namespaces import QuotaChangePayload


class QuotaChangeKind(Kind):
    value = RequestKind.QUOTA_CHANGE
    payload = QuotaChangePayload
    target = Target.NAMESPACE

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        namespace = Namespace.objects.get(
            tenant=tenant, name=payload["namespace"], state=NamespaceState.ACTIVE
        )
        return increase(namespace, payload)

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        # The increase against the namespace's quota now: none once it was applied.
        namespace = (
            Namespace.objects.filter(tenant=tenant, name=payload.get("namespace", ""))
            .order_by("-created_at")
            .first()
        )
        return Usage() if namespace is None else increase(namespace, payload)


KIND = QuotaChangeKind()
