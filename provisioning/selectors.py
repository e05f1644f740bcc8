"""Reads of the provisioning app's own records."""

from __future__ import annotations

from django.db.models import QuerySet

from provisioning.models import GitCommit
from tenants.choices import Decision
from tenants.models import Namespace, Request


def commits_for_namespace(namespace: Namespace, *, limit: int = 5) -> QuerySet[GitCommit]:
    """The latest GitOps commits that wrote or removed this namespace's files.

    The caller has already checked that the user may see the namespace.
    """
    return GitCommit.objects.filter(namespaces=namespace).order_by("-created_at", "-id")[:limit]


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
