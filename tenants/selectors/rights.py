"""Who may do what in which tenant: platform admins, tenant roles, deciding requests."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from tenants.choices import ApproverRole, NamespaceState, Role
from tenants.models import Membership, Request, Tenant, User


def tenants_for_user(user: User) -> QuerySet[Tenant]:
    """Tenants the user belongs to (not retired ones); platform admins see every tenant."""
    tenants = Tenant.objects.all()
    if not is_platform_admin(user):  # a retired tenant leaves its members' lists
        tenants = tenants.filter(memberships__user=user, retired_at__isnull=True)
    return tenants.annotate(
        live_namespace_count=Count(
            "namespaces", filter=~Q(namespaces__state=NamespaceState.DECOMMISSIONED), distinct=True
        )
    ).order_by("slug")


def role_by_tenant(user: User) -> dict[int, str]:
    return dict(user.memberships.values_list("tenant_id", "role"))


def is_platform_admin(user: User) -> bool:
    return bool(user.is_platform_admin or user.is_superuser)


def visible_tenant(user: User, slug: str) -> Tenant:
    return get_object_or_404(tenants_for_user(user), slug=slug)


def role_in(user: User, tenant: Tenant) -> str | None:
    return (
        Membership.objects.filter(user=user, tenant=tenant).values_list("role", flat=True).first()
    )


def may_request(user: User, tenant: Tenant) -> bool:
    return is_platform_admin(user) or role_in(user, tenant) is not None


def why_cannot_decide(user: User, tenancy_request: Request) -> str | None:
    """None when the user may approve or reject this request, else the reason they may not."""
    if tenancy_request.requester_id == user.pk:
        return "Nobody may decide their own request."
    if is_platform_admin(user):
        return None
    if (
        tenancy_request.approver_role == ApproverRole.TENANT_OWNER
        and role_in(user, tenancy_request.tenant) == Role.OWNER
    ):
        return None
    who = ApproverRole(tenancy_request.approver_role).label.lower()
    return f"This request needs a {who} to decide it."
