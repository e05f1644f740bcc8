"""A new namespace for an application, in one tier."""

from __future__ import annotations

from typing import Any

from tenants.budget import Usage
from tenants.choices import RequestKind
from tenants.kinds.base import Kind, payload_usage, replayed_payload_usage
from tenants.models import Tenant
from tenants.payloads.namespaces import NamespacePayload


class NamespaceKind(Kind):
    value = RequestKind.NAMESPACE
    payload = NamespacePayload
    previews_names = True

    def claimed_tiers(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [(payload["app"], payload["tier"])]

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        return payload_usage(payload)

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        return replayed_payload_usage(payload)


KIND = NamespaceKind()
