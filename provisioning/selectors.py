"""Reads of the provisioning app's own records."""

from __future__ import annotations

from tenants.choices import Decision
from tenants.models import Request


def approvers_of(tenancy_request: Request) -> list[str]:
    """Who approved the request, in order; "policy" for an automatic approval."""
    names: list[str] = []
    approvals = tenancy_request.approvals.filter(decision=Decision.APPROVE).select_related(
        "approver"
    )
    for approval in approvals.order_by("created_at", "id"):
        name = approval.approver.username if approval.approver_id else "policy"
        if name not in names:
            names.append(name)
    return names
