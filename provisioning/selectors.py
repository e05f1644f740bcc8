"""Reads of the provisioning app's own records."""

from __future__ import annotations

from tenants.choices import Decision
from tenants.models import Approval, Request


def approvers_of(tenancy_request: Request) -> list[str]:
    """Who approved the request, in order; "policy" for an automatic approval."""
    return approvers_by_request([tenancy_request.pk]).get(tenancy_request.pk, [])


def approvers_by_request(request_ids: list[int]) -> dict[int, list[str]]:
    """approvers_of of several requests, in one query."""
    found: dict[int, list[str]] = {}
    for request_id, username in (
        Approval.objects.filter(request_id__in=request_ids, decision=Decision.APPROVE)
        .order_by("created_at", "id")
        .values_list("request_id", "approver__username")
    ):
        names = found.setdefault(request_id, [])
        name = username or "policy"
        if name not in names:
            names.append(name)
    return found
