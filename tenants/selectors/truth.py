"""A tenant's truth table as people read it: scoped to what they may see, filtered to one
namespace or project."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import Http404
from django.utils import timezone

from tenants.choices import NamespaceState
from tenants.models import Namespace, Project, Tenant, TruthTable, User
from tenants.selectors.definitions import upgrades_available
from tenants.selectors.rights import is_platform_admin, visible_tenant

STATES = ("drifted", "missing_in_git", "missing_in_cluster", "orphan", "in_sync")
STATE_LABELS = {
    "in_sync": "in sync",
    "drifted": "drifted",
    "missing_in_git": "missing in git",
    "missing_in_cluster": "missing in cluster",
    "orphan": "orphan",
}


@dataclass
class TruthView:
    tenant: Tenant
    table: TruthTable | None
    rows: list[dict]
    counts: dict[str, int]
    namespace: str
    project: str
    may_repair: bool
    # Namespaces whose tier has a newer definition than the one they run: upgrades (a
    # campaign rolls them out), shown apart from drift.
    upgrades: list[str]


def _about(row: dict, namespaces: set[str], apps: set[str]) -> bool:
    if row["source"] == "git":
        return any(f"apps/{app}/" in row["object"] for app in apps)
    return row["namespace"] in namespaces or row["object"] in {
        f"Namespace/{name}" for name in namespaces
    }


def truth_table(user: User, slug: str, *, namespace: str = "", project: str = "") -> TruthView:
    """The tenant's last truth table, worst states first; 404 for a namespace or project
    the tenant does not have."""
    tenant = visible_tenant(user, slug)
    table = TruthTable.objects.filter(tenant=tenant).first()
    rows = list(table.rows) if table else []
    if namespace or project:
        if namespace:
            found = (
                Namespace.objects.filter(tenant=tenant, name=namespace)
                .select_related("project", "request")
                .order_by("-pk")
                .first()
            )
            if found is None:
                raise Http404("The tenant has no namespace of this name.")
            names = {namespace}
            payload = found.request.payload if found.request_id else {}
            app = (
                found.project.name
                if found.project_id
                else (payload.get("app") or payload.get("project") or "")
            )
            apps = {app} if app else set()
        else:
            chosen = Project.objects.filter(tenant=tenant, name=project).first()
            if chosen is None:
                raise Http404("The tenant has no project of this name.")
            names = set(chosen.environments.values_list("name", flat=True))
            names |= {
                row["namespace"]
                for row in rows
                if row["namespace"].startswith(f"{tenant.slug}-{project}-kargo")
            }
            apps = {project}
        rows = [row for row in rows if _about(row, names, apps)]
    else:
        names = None
    rows.sort(key=lambda row: (STATES.index(row["state"]), row["source"], row["object"]))
    counts = {state: sum(row["state"] == state for row in rows) for state in STATES}
    live = (
        Namespace.objects.filter(tenant=tenant, state=NamespaceState.ACTIVE)
        .select_related("tier", "tier_revision", "bundle_revision")
        .order_by("name")
    )
    if names is not None:
        live = live.filter(name__in=names)
    return TruthView(
        tenant=tenant,
        table=table,
        rows=rows,
        counts=counts,
        namespace=namespace,
        project=project,
        may_repair=is_platform_admin(user),
        upgrades=upgrades_available(list(live)),
    )


def refresh_wait(tenant: Tenant) -> int:
    """Seconds until the tenant's table may be retaken on demand (0: now). Each comparison
    fetches the repository and reads every object on the clusters: not on every click."""
    taken = TruthTable.objects.filter(tenant=tenant).values_list("taken_at", flat=True).first()
    if taken is None:
        return 0
    left = settings.BERTH_TRUTH_REFRESH_SECONDS - (timezone.now() - taken).total_seconds()
    return max(0, int(left + 0.999))
