"""A new namespace for an application, in one tier."""

from __future__ import annotations

from typing import Any

from tenants.choices import RequestKind
from tenants.kinds.base import OneSizedNamespace
from tenants.payloads.namespaces import NamespacePayload


class NamespaceKind(OneSizedNamespace):
    value = RequestKind.NAMESPACE
    payload = NamespacePayload
    previews_names = True

    def claimed_tiers(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [(payload["app"], payload["tier"])]


KIND = NamespaceKind()
