"""What the Backstage catalog tests read (tests/tenants/api/test_backstage_*.py): the API
demo with projects and namespaces of both tenants."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace, Project, Tenant

CATALOG = "/api/v1/backstage/catalog-info.yaml"


INTEGRATION = Path(__file__).resolve().parents[2] / "integrations" / "backstage"


def node_with(package: str) -> str:
    """node, with integrations/backstage's `package` installed; the test skipped, saying
    why, without them."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: Berth's Backstage integration runs on it")
    if not (INTEGRATION / "node_modules" / package).is_dir():
        pytest.skip(
            f"integrations/backstage's packages ({package}) are not installed: `make "
            "backstage` (make install and .ci/run do it)"
        )
    return node


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
