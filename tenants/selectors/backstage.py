"""Berth as Backstage's software catalog reads it (GET /api/v1/backstage/catalog-info.yaml):
per tenant the caller may see, a Group (its people) and a System, a Component per project,
and a Resource per live namespace (`type: kubernetes-namespace`) in the Backstage namespace
named after its cluster, since two clusters may hold the same namespace name. Entities
carry links back to Berth's pages and the cluster's Argo CD, and the annotations Backstage's
Kubernetes plugin finds workloads by. Four queries however many tenants and namespaces."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.db.models import Prefetch, QuerySet

from tenants.choices import NamespaceState
from tenants.models import Membership, Namespace, Project, Tenant, User
from tenants.naming import argocd_apps_namespace, kubernetes_id
from tenants.selectors.rights import tenants_for_user

API_VERSION = "backstage.io/v1alpha1"
# Backstage's entity names: letters and digits, runs joined by one of - _ . (63 at most).
ENTITY_NAME = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*\Z")
KUBERNETES_ID = "backstage.io/kubernetes-id"
KUBERNETES_NAMESPACE = "backstage.io/kubernetes-namespace"
ARGOCD_SELECTOR = "argocd/app-selector"
# The label Berth's GitOps files put on a project's Applications (provisioning's PART_OF).
PART_OF = "app.kubernetes.io/part-of"
SHOWN_STATES = (NamespaceState.PENDING, NamespaceState.ACTIVE)


def catalog_tenants(user: User, slug: str | None = None) -> QuerySet[Tenant]:
    """The tenants whose entities the caller sees (one, where `slug` names it), with their
    people, projects and live namespaces read alongside."""
    tenants = tenants_for_user(user).filter(retired_at__isnull=True)
    if slug is not None:
        tenants = tenants.filter(slug=slug)
    return tenants.prefetch_related(
        Prefetch(
            "memberships", Membership.objects.select_related("user").order_by("user__username")
        ),
        Prefetch("projects", Project.objects.order_by("name")),
        Prefetch(
            "namespaces",
            Namespace.objects.filter(state__in=SHOWN_STATES)
            .select_related("tier", "cluster", "project")
            .order_by("cluster__name", "name"),
        ),
    )


def catalog_entities(tenants: Iterable[Tenant], *, base_url: str) -> list[dict[str, Any]]:
    """Every entity of these tenants, in a stable order (`base_url`: Berth's own, for links)."""
    base = base_url.rstrip("/")
    entities: list[dict[str, Any]] = []
    for tenant in tenants:
        entities += [_group(tenant, base), _system(tenant, base)]
        namespaces = list(tenant.namespaces.all())
        for project in tenant.projects.all():
            entities.append(_component(tenant, project, namespaces, base))
        entities += [_resource(tenant, namespace, base) for namespace in namespaces]
    return entities


def _ref(kind: str, name: str, namespace: str = "default") -> str:
    return f"{kind}:{namespace}/{name}"


def _metadata(name: str, title: str, description: str, links: list[dict[str, str]], **more):
    return {"name": name, "title": title, "description": description, "links": links, **more}


def _group(tenant: Tenant, base: str) -> dict[str, Any]:
    # People Berth knows in the tenant (synced from its groups at sign-in) whose user name
    # Backstage can take as a User entity's; the groups themselves are annotated.
    members = sorted(
        {m.user.username for m in tenant.memberships.all() if ENTITY_NAME.match(m.user.username)}
    )
    groups = sorted({*tenant.owner_groups, *tenant.member_groups, *tenant.viewer_groups})
    return {
        "apiVersion": API_VERSION,
        "kind": "Group",
        "metadata": _metadata(
            tenant.slug,
            tenant.name,
            f"Berth tenant {tenant.slug}: the team that owns its namespaces.",
            [{"url": f"{base}/tenants/{tenant.slug}/", "title": "Berth", "icon": "dashboard"}],
            annotations={"berth.dev/tenant": tenant.slug, "berth.dev/groups": ",".join(groups)},
        ),
        "spec": {
            "type": "team",
            "profile": {"displayName": tenant.name},
            "children": [],
            "members": members,
        },
    }


def _system(tenant: Tenant, base: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "System",
        "metadata": _metadata(
            tenant.slug,
            tenant.name,
            f"Everything Berth runs for tenant {tenant.slug}.",
            [{"url": f"{base}/tenants/{tenant.slug}/", "title": "Berth", "icon": "dashboard"}],
            annotations={"berth.dev/tenant": tenant.slug},
        ),
        "spec": {"owner": _ref("group", tenant.slug)},
    }


def _component(
    tenant: Tenant, project: Project, namespaces: list[Namespace], base: str
) -> dict[str, Any]:
    name = kubernetes_id(tenant.slug, project.name)
    return {
        "apiVersion": API_VERSION,
        "kind": "Component",
        "metadata": _metadata(
            name,
            project.name,
            f"Project {project.name} of tenant {tenant.slug} ({project.gitops_engine}).",
            [{"url": f"{base}/tenants/{tenant.slug}/", "title": "Berth", "icon": "dashboard"}],
            annotations={
                "berth.dev/tenant": tenant.slug,
                KUBERNETES_ID: name,
                ARGOCD_SELECTOR: f"berth.dev/tenant={tenant.slug},{PART_OF}={project.name}",
            },
        ),
        "spec": {
            "type": "service",
            "lifecycle": "production",
            "owner": _ref("group", tenant.slug),
            "system": _ref("system", tenant.slug),
            "dependsOn": [
                _ref("resource", ns.name, ns.cluster.name)
                for ns in namespaces
                if ns.project_id == project.pk
            ],
        },
    }


def _resource(tenant: Tenant, namespace: Namespace, base: str) -> dict[str, Any]:
    cluster = namespace.cluster
    links = [{"url": f"{base}/namespaces/{namespace.pk}/", "title": "Berth", "icon": "dashboard"}]
    engine = namespace.project.gitops_engine if namespace.project_id else tenant.gitops_engine
    if cluster.argocd_url and engine.startswith("argocd"):
        # The Application Berth writes for a namespace is named after it, in <tenant>-apps.
        links.append(
            {
                "url": f"{cluster.argocd_url.rstrip('/')}/applications/"
                f"{argocd_apps_namespace(tenant.slug)}/{namespace.name}",
                "title": "Argo CD",
            }
        )
    annotations = {
        "berth.dev/tenant": tenant.slug,
        "berth.dev/cluster": cluster.name,
        "berth.dev/tier": namespace.tier.slug,
        KUBERNETES_NAMESPACE: namespace.name,
    }
    if namespace.project_id:
        annotations[KUBERNETES_ID] = kubernetes_id(tenant.slug, namespace.project.name)
    return {
        "apiVersion": API_VERSION,
        "kind": "Resource",
        "metadata": _metadata(
            namespace.name,
            f"{namespace.name} on {cluster.name}",
            f"Namespace {namespace.name} on cluster {cluster.name}, tier {namespace.tier.slug}.",
            links,
            namespace=cluster.name,
            annotations=annotations,
        ),
        "spec": {
            "type": "kubernetes-namespace",
            "owner": _ref("group", tenant.slug),
            "system": _ref("system", tenant.slug),
            "lifecycle": "experimental" if namespace.tier.is_ephemeral else namespace.tier.slug,
        },
    }
