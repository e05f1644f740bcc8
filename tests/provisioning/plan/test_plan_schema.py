"""Every object Berth would apply validates against the Kubernetes schemas (the official
client's models) and, for Argo CD / Kargo / Flux kinds, against the upstream CRDs."""

import pytest

from provisioning import reconcile
from provisioning.schema import validate_objects
from tenants import demo, services
from tenants.models import Tenant, User

pytestmark = pytest.mark.crds

PAYLOADS = [
    (
        "namespace",
        {"app": "shop", "tier": "dev", "cluster": "sandbox", "cpu": "500m", "memory": "512Mi"},
    ),
    (
        "namespace",
        {
            "app": "shop",
            "tier": "prod",
            "cluster": "sandbox",
            "cpu": "4",
            "memory": "8Gi",
            "storage": "100Gi",
        },
    ),
    ("project", {"app": "ledger", "engine": "argocd_kargo", "cluster": "sandbox"}),
    ("project", {"app": "ledger", "engine": "flux", "cluster": "sandbox"}),
    ("project", {"app": "ledger", "engine": "argocd", "cluster": "sandbox", "tiers": ["review"]}),
]


@pytest.mark.parametrize(("kind", "payload"), PAYLOADS)
def test_every_planned_object_validates_against_its_schema(db, kind, payload):
    demo.seed(sandbox_api_url="http://127.0.0.1:6550")
    tenancy_request = services.submit_request(
        tenant=Tenant.objects.get(slug="payments"),
        kind=kind,
        payload=payload,
        requester=User.objects.get(username="dev"),
    )
    plan = reconcile.current_plan(tenancy_request)

    assert plan.apply
    assert validate_objects(plan.apply) == {}
