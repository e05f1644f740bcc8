"""An ephemeral environment (a review app): a project's namespace of its own, or a place
in a namespace its environments share, until its time is up."""

from __future__ import annotations

from typing import Any

from tenants.budget import Usage
from tenants.choices import RequestKind
from tenants.kinds.base import Kind, replayed_payload_usage
from tenants.models import Tenant
from tenants.payloads.environments import EphemeralPayload


class EphemeralKind(Kind):
    value = RequestKind.EPHEMERAL
    payload = EphemeralPayload
    previews_names = True
    quiet = True
    starts_environment = True
    form_note = (
        "The approval rules decide it like any request; by default one within the tenant's "
        "budget is approved at once."
    )

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        if not payload["creates_namespace"]:
            return Usage()  # it lives in a shared namespace that is already counted
        return Usage(payload["cpu_millis"], payload["memory_mib"], payload["storage_gib"], 1)

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        if not payload.get("creates_namespace", True):
            return Usage()
        return replayed_payload_usage(payload)


KIND = EphemeralKind()
