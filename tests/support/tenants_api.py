"""Helpers that several modules of the REST API's tests (tests/tenants/api/) share, beside
tests/support/api.py: the requests' path, the bodies and rows they start from, and the
calls they make to approve a plan."""

from __future__ import annotations

from tenants import services
from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace
from tenants.selectors import review
from tests.support.api import NAMESPACE, submit

REQUESTS = "/api/v1/requests/"


def namespace_request(**payload) -> dict:
    return {"tenant": "payments", "kind": "namespace", "payload": {**NAMESPACE, **payload}}


def active_namespace(world, name="payments-live-dev", tenant=None, project=None, tier="dev"):
    return Namespace.objects.create(
        name=name,
        tenant=tenant or world.payments,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name="sandbox"),
        project=project,
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )


def failed_request(world):
    tenancy_request = submit(world, tier="dev", app="broken")  # approved by policy
    run = services.start_provisioning(request_id=tenancy_request.pk, plan_digest="x")
    services.mark_failed(run=run, error="the API server said no")
    return tenancy_request


def approve(client, tenancy_request, digest=None, note="ok"):
    digest = digest or review(tenancy_request).digest
    return client.post(
        f"{REQUESTS}{tenancy_request.pk}/approve/",
        {"plan_digest": digest, "note": note},
        format="json",
    )
