"""Tenant decommission can retire the tenant record once its last cluster is cleaned: it
takes no new request and leaves its members' lists, the names it held are free again, and
its records and audit trail stay."""

from __future__ import annotations

import pytest

from tenants import selectors, services
from tenants.choices import RequestKind
from tenants.errors import InvalidInput
from tenants.models import AuditEvent, NamespaceClaim, Tenant
from tests.support.gitops_loop import decide, decided_and_done, submit, work

# The GitOps loop's world (tests/support/gitops_loop.py) applies Argo CD's and Kargo's
# objects: with the upstream CRDs only (they skip, saying why, without them).
pytestmark = pytest.mark.crds


def provisioned(gitops_world) -> None:
    submit(
        gitops_world,
        "namespace",
        app="shop",
        tier="dev",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    work()


def test_the_last_clusters_decommission_retires_the_tenant_keeping_its_records(
    gitops_world, sandbox
):
    provisioned(gitops_world)
    leaving = submit(
        gitops_world,
        RequestKind.TENANT_DECOMMISSION,
        cluster="sandbox",
        reason="The team is gone.",
        retire=True,
    )
    decided_and_done(gitops_world, leaving)

    tenant = Tenant.objects.get(slug="payments")
    assert tenant.retired_at is not None
    assert not NamespaceClaim.objects.filter(tenant=tenant, released_at__isnull=True).exists()
    assert tenant not in selectors.tenants_for_user(gitops_world["owner"])  # gone from their list
    assert tenant in selectors.tenants_for_user(gitops_world["admin"])  # kept for the platform
    event = AuditEvent.objects.get(action="tenant.retire")
    assert event.after["request"] == leaving.pk and "payments-apps" in event.after["names_released"]
    assert AuditEvent.objects.filter(tenant_id=tenant.pk, action="request.submit").exists()
    with pytest.raises(InvalidInput, match="retired"):
        services.submit_request(
            tenant=tenant,
            kind="namespace",
            requester=gitops_world["admin"],
            payload={
                "app": "again",
                "tier": "dev",
                "cluster": "sandbox",
                "cpu": "500m",
                "memory": "512Mi",
            },
        )


def test_without_retire_the_tenant_stays_and_keeps_its_names(gitops_world, sandbox):
    provisioned(gitops_world)
    leaving = submit(
        gitops_world, RequestKind.TENANT_DECOMMISSION, cluster="sandbox", reason="Moving clusters."
    )
    decide(gitops_world, leaving)
    work()
    tenant = Tenant.objects.get(slug="payments")
    assert tenant.retired_at is None
    assert NamespaceClaim.objects.filter(tenant=tenant, released_at__isnull=True).exists()


def test_retiring_is_refused_while_another_cluster_holds_the_tenants_namespaces(gitops_world):
    from tenants.models import Cluster, EnvironmentTier, Namespace

    other = Cluster.objects.create(name="prod-eu", plan_only=True)
    Namespace.objects.create(
        name="payments-old-dev",
        tenant=gitops_world["tenant"],
        cluster=other,
        tier=EnvironmentTier.objects.get(slug="dev"),
        state="active",
        cpu_millis=100,
        memory_mib=128,
    )
    provisioned(gitops_world)
    with pytest.raises(InvalidInput) as refused:
        submit(
            gitops_world,
            RequestKind.TENANT_DECOMMISSION,
            cluster="sandbox",
            reason="The team is gone.",
            retire=True,
        )
    assert "still has namespaces on prod-eu" in str(refused.value.field_errors)
    assert Tenant.objects.get(slug="payments").retired_at is None
