"""A project's new environment: one more tier of it."""

from __future__ import annotations

from typing import Any

from tenants.choices import RequestKind
from tenants.kinds.base import OneSizedNamespace
from tenants.payloads.namespaces import EnvironmentPayload


class EnvironmentKind(OneSizedNamespace):
    value = RequestKind.ENVIRONMENT
    payload = EnvironmentPayload
    previews_names = True
    names_field = "tier"

    def claimed_tiers(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [(payload["project"], payload["tier"])]


KIND = EnvironmentKind()
