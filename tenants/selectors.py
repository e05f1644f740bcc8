"""Reads of the tenancy domain, always scoped to what the user may see."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from tenants.choices import NamespaceState
from tenants.models import Request, Tenant, User


def tenants_for_user(user: User) -> QuerySet[Tenant]:
    """Tenants the user belongs to; platform admins see every tenant."""
    tenants = Tenant.objects.all()
    if not (user.is_platform_admin or user.is_superuser):
        tenants = tenants.filter(memberships__user=user)
    return tenants.annotate(
        live_namespace_count=Count(
            "namespaces", filter=~Q(namespaces__state=NamespaceState.DECOMMISSIONED), distinct=True
        )
    ).order_by("slug")


def role_by_tenant(user: User) -> dict[int, str]:
    return dict(user.memberships.values_list("tenant_id", "role"))


def requests_visible_to(user: User) -> QuerySet[Request]:
    requests = Request.objects.select_related("tenant", "requester")
    if user.is_platform_admin or user.is_superuser:
        return requests
    return requests.filter(tenant__memberships__user=user)
