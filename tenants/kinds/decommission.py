"""One live namespace, taken away."""

from __future__ import annotations

from typing import Any

from tenants.choices import RequestKind
from tenants.kinds.base import Kind, Target
from tenants.models import Namespace
from tenants.payloads.namespaces import DecommissionPayload


class DecommissionKind(Kind):
    value = RequestKind.DECOMMISSION
    payload = DecommissionPayload
    target = Target.NAMESPACE
    deduplicated_by = ("namespace",)
    decommissions = True
    removes_namespaces = True

    def removes(self, payload: dict[str, Any], namespace: Namespace) -> bool:
        return payload.get("namespace") == namespace.name


KIND = DecommissionKind()
