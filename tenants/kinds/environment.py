"""A project's new environment: one more tier of it."""

from __future__ import annotations

from typing import Any

from tenants.budget import Usage
from tenants.choices import RequestKind
from tenants.kinds.base import Kind, payload_usage, replayed_payload_usage
from tenants.models import Tenant
from tenants.payloads.namespaces import EnvironmentPayload


class EnvironmentKind(Kind):
    value = RequestKind.ENVIRONMENT
    payload = EnvironmentPayload
    previews_names = True
    names_field = "tier"

    def claimed_tiers(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [(payload["project"], payload["tier"])]

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        return payload_usage(payload)

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        return replayed_payload_usage(payload)


KIND = EnvironmentKind()
