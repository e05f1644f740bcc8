"""Namespaces and projects a person may see, and the name a request would get."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from tenants.choices import NamePurpose
from tenants.models import Namespace, Project, Tenant, User
from tenants.name_registry import Wanted, project_exists, project_names, refusal, tier_name
from tenants.naming import was_truncated
from tenants.selectors.rights import is_platform_admin
from tenants.validators import validate_dns_label


def namespaces_visible_to(user: User) -> QuerySet[Namespace]:
    namespaces = Namespace.objects.select_related(
        "tenant", "tier", "cluster", "project", "tier_revision", "bundle_revision"
    )
    if is_platform_admin(user):
        return namespaces
    return namespaces.filter(tenant__memberships__user=user)


def visible_namespace(user: User, pk: int) -> Namespace:
    return get_object_or_404(namespaces_visible_to(user), pk=pk)


@dataclass(frozen=True)
class PreviewedName:
    """A namespace a request would create, as its form's preview shows it."""

    name: str
    what: str  # its tier, "its Kargo project", or whose it is when shared
    truncated: bool
    refused: str = ""  # why the request may not have it, as submission says it
    taken: bool = False  # the registry holds it: it exists, or a request claimed it


def name_preview(
    tenant: Tenant, *, app: str, tiers: list[str], cluster: str, engine: str = ""
) -> dict:
    """Every namespace a request would create, as typed: one per tier, and for a project
    (`engine` given: only the project form has one) its Kargo project's namespace on Argo
    CD + Kargo and the tenant's namespace its projects share. Each is refused for the
    reason submission would give (tenants.name_registry.refusal, the same check), "taken"
    when the registry holds it."""
    if not app or not tiers:
        return {"names": [], "problems": []}
    problems = []
    try:
        validate_dns_label(app)
    except ValidationError as exc:
        problems += exc.messages
    if engine:
        wanted = project_names(tenant, app=app, tiers=tiers, engine=engine)
        problems += [exists] if (exists := project_exists(tenant, app)) else []
    else:
        wanted = [tier_name(tenant, app, tier) for tier in tiers]
    where = tenant.allowed_clusters.filter(name=cluster).first()
    names = []
    for one in wanted:
        refused = refusal(where, one, tenant=tenant)
        last_word = one.tier or "kargo"  # a project's own names end in `kargo`
        names.append(
            PreviewedName(
                name=one.name,
                what=_what(one),
                truncated=bool(one.app) and was_truncated(tenant.slug, one.app, last_word),
                refused=refused.reason if refused else "",
                taken=bool(refused and refused.taken),
            )
        )
    return {"names": names, "problems": problems}


def _what(wanted: Wanted) -> str:
    if wanted.purpose == NamePurpose.KARGO:
        return "its Kargo project"
    if wanted.purpose == NamePurpose.ARGOCD_APPS:
        return "the tenant's Argo CD applications, shared by its projects"
    if wanted.purpose == NamePurpose.GITOPS:
        return "the tenant's Flux GitOps, shared by its projects"
    return wanted.tier


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
