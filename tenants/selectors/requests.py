"""Requests a person may see, their history, and the approval queue."""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from tenants.choices import ApproverRole, NamePurpose, RequestState, Role
from tenants.models import (
    AuditEvent,
    Membership,
    Namespace,
    NamespaceClaim,
    Request,
    Tenant,
    User,
)
from tenants.selectors.access import is_platform_admin


def requests_visible_to(user: User) -> QuerySet[Request]:
    requests = Request.objects.select_related("tenant", "requester")
    if is_platform_admin(user):
        return requests
    return requests.filter(tenant__memberships__user=user)


# What a list of requests shows of each: its own columns, then (as `tenant_slug` and
# `requester_name`) its tenant's slug and its requester's username.
LISTED_COLUMNS = (
    "id", "kind", "state", "status_message", "payload", "policy_rule", "approvals_required",
    "approver_role", "waiting_since", "next_try_at", "wait_reason", "created_at", "updated_at",
)


def request_rows_visible_to(user: User) -> QuerySet:
    """requests_visible_to as rows (dicts of LISTED_COLUMNS, tenant_slug, requester_name),
    not model instances: a page of instances built three per row (request, tenant,
    requester) and took 40 % of the list's time (docs/benchmarks.md). The slug and the name
    are subqueries, not joins, so the page's COUNT, which leaves unused subqueries out,
    reads the requests alone."""
    return requests_visible_to(user).annotate(
        tenant_slug=Subquery(Tenant.objects.filter(pk=OuterRef("tenant_id")).values("slug")),
        requester_name=Subquery(
            User.objects.filter(pk=OuterRef("requester_id")).values("username")),
    ).values(*LISTED_COLUMNS, "tenant_slug", "requester_name")


def visible_request(user: User, pk: int) -> Request:
    """One request, or 404 — never a hint that another tenant's request exists."""
    return get_object_or_404(requests_visible_to(user), pk=pk)


def request_history(tenancy_request: Request) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(
        object_type=Request._meta.label_lower, object_id=str(tenancy_request.pk)
    ).order_by("created_at", "id")


def namespaces_of_request(tenancy_request: Request) -> list[Namespace]:
    """The namespaces a request created, in promotion order (dev before prod), or the one it
    changes or removes."""
    namespaces = Namespace.objects.select_related("project").order_by(
        "tier__position", "tier__slug", "name")
    target = (tenancy_request.payload or {}).get("namespace")
    made = list(namespaces.filter(request=tenancy_request))
    if target and not made:
        made = list(namespaces.filter(tenant_id=tenancy_request.tenant_id, name=target)[:1])
    return made


def kargo_namespace_of_request(tenancy_request: Request) -> str:
    """The Kargo project namespace a project request claimed beside its tiers', or ""."""
    return NamespaceClaim.objects.filter(
        request=tenancy_request, purpose=NamePurpose.KARGO,
    ).order_by("-created_at").values_list("name", flat=True).first() or ""


def commits_of_request(tenancy_request: Request) -> QuerySet:
    """What Berth pushed to the tenant's repository for this request, newest first."""
    return tenancy_request.git_commits.order_by("-created_at", "-id")


def decidable_by(user: User) -> QuerySet[Request]:
    """The approval queue: requests awaiting a decision this user may make, oldest first."""
    pending = (
        Request.objects.filter(state=RequestState.SUBMITTED)
        .exclude(requester=user)
        .select_related("tenant", "requester")
        .order_by("created_at", "id")
    )
    if is_platform_admin(user):
        return pending
    owned = Membership.objects.filter(user=user, role=Role.OWNER).values("tenant_id")
    return pending.filter(approver_role=ApproverRole.TENANT_OWNER, tenant_id__in=owned)
