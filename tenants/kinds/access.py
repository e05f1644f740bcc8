"""Access for a person: one of the tiers' roles on one live namespace, for a while
(tenants.models.AccessGrant). Asked on its own form and API (/access/grants/), by members
and outsiders alike; decided by the owning tenant's rules; adds nothing to the budget."""

from __future__ import annotations

from typing import Any

from tenants.choices import RequestKind
from tenants.kinds.base import Kind, Target
from tenants.payloads.access import AccessPayload


class AccessKind(Kind):
    value = RequestKind.ACCESS
    payload = AccessPayload
    target = Target.NAMESPACE
    asked_elsewhere = (
        "Access is asked for on its own: the namespace page's Ask for access, "
        "POST /api/v1/access-grants/ or `berth access request`."
    )
    grants_access = True
    open_to_outsiders = True
    form_note = (
        "The namespace's tenant decides it by its approval rules; nobody approves their own. "
        "Once approved, your time starts and the cluster binds you until it is up."
    )

    def rule_attributes(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {"access_role": payload["role"], "access_minutes": payload["minutes"]}


KIND = AccessKind()
