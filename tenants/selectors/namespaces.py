"""Namespaces and projects a person may see, and the name a request would get."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from tenants.choices import NamespaceState
from tenants.models import Namespace, Project, Tenant, User
from tenants.selectors.rights import is_platform_admin


def namespaces_visible_to(user: User) -> QuerySet[Namespace]:
    namespaces = Namespace.objects.select_related(
        "tenant", "tier", "cluster", "project", "tier_revision", "bundle_revision"
    )
    if is_platform_admin(user):
        return namespaces
    return namespaces.filter(tenant__memberships__user=user)


def visible_namespace(user: User, pk: int) -> Namespace:
    return get_object_or_404(namespaces_visible_to(user), pk=pk)


def name_preview(tenant: Tenant, *, app: str, tier: str, cluster: str) -> dict:
    """The namespace name a request would get, and why it could not have it, as typed."""
    from django.conf import settings

    from tenants.naming import namespace_name, reserved_reason, was_truncated
    from tenants.validators import validate_dns_label

    if not app or not tier:
        return {"name": "", "problems": []}
    name = namespace_name(tenant.slug, app, tier)
    problems = []
    try:
        validate_dns_label(app)
    except Exception as exc:
        problems += list(getattr(exc, "messages", [str(exc)]))
    reason = reserved_reason(name, berth_namespace=settings.BERTH_NAMESPACE)
    if reason:
        problems.append(reason)
    taken = (
        Namespace.objects.filter(cluster__name=cluster, name=name)
        .exclude(state=NamespaceState.DECOMMISSIONED)
        .first()
    )
    if taken is not None:
        problems.append(f"{name} is already taken ({taken.get_state_display().lower()}).")
    return {"name": name, "truncated": was_truncated(tenant.slug, app, tier), "problems": problems}


def projects_visible_to(user: User) -> QuerySet[Project]:
    """Projects of the user's tenants; platform admins see every project."""
    projects = Project.objects.select_related("tenant")
    if is_platform_admin(user):
        return projects
    return projects.filter(tenant__memberships__user=user)


def visible_project(user: User, pk: int) -> Project:
    return get_object_or_404(projects_visible_to(user), pk=pk)


def commits_for_namespace(namespace: Namespace, *, limit: int = 5) -> QuerySet:
    """The latest GitOps commits that wrote or removed this namespace's files (recorded by
    the engine, read here through the relation). The caller has checked that the user may
    see the namespace."""
    return namespace.git_commits.order_by("-created_at", "-id")[:limit]
