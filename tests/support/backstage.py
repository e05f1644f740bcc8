"""What the Backstage catalog tests read (tests/tenants/api/test_backstage_*.py): the API
demo with projects and namespaces of both tenants."""

from __future__ import annotations

from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace, Project, Tenant

CATALOG = "/api/v1/backstage/catalog-info.yaml"


def add_namespace(tenant: Tenant, name: str, tier: str = "dev", project=None, **more) -> Namespace:
    return Namespace.objects.create(
        name=name,
        tenant=tenant,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name="sandbox"),
        project=project,
        cpu_millis=500,
        memory_mib=512,
        state=more.pop("state", NamespaceState.ACTIVE),
        **more,
    )


def with_estate(api_world):
    """payments: project shop on dev and prod, a decommissioned namespace; search: one of
    its own. The sandbox's Argo CD is at https://argocd.example.com."""
    Cluster.objects.filter(name="sandbox").update(argocd_url="https://argocd.example.com/")
    shop = Project.objects.create(tenant=api_world.payments, name="shop", gitops_engine="argocd")
    add_namespace(api_world.payments, "payments-shop-dev", project=shop)
    add_namespace(api_world.payments, "payments-shop-prod", "prod", project=shop)
    add_namespace(api_world.payments, "payments-old-dev", state=NamespaceState.DECOMMISSIONED)
    add_namespace(api_world.search, "search-web-dev")
    return api_world
