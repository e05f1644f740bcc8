"""Tenants, clusters and tiers through the REST API: members see their tenants and no
secrets, platform admins onboard and change tenants (audited) and manage clusters whose
credentials are write-only, and every member reads the tiers.

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tenants.choices import Role
from tenants.demo import DEMO_BUDGET
from tenants.models import AuditEvent, Cluster, Tenant
from tests.support.api import api, assert_problem

# --- tenants, clusters, tiers --------------------------------------------------------------


def test_members_see_their_tenants_with_their_role_and_no_secrets(api_world):
    Tenant.objects.filter(pk=api_world.payments.pk).update(gitops_repo_url="https://git/x")
    tenant = Tenant.objects.get(pk=api_world.payments.pk)
    tenant.gitops_credentials = "s3cret-token"
    tenant.save()

    body = api(api_world.member).get("/api/v1/tenants/").json()

    assert [(t["slug"], t["role"]) for t in body["results"]] == [("payments", Role.MEMBER)]
    payments = body["results"][0]
    assert payments["gitops_credentials_set"] is True
    assert "gitops_credentials" not in payments and "s3cret-token" not in str(body)
    assert payments["allowed_tiers"] == ["review", "dev", "staging", "prod"] or set(
        payments["allowed_tiers"]
    ) == {"dev", "staging", "prod", "review"}


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("admin", 200),
        ("owner", 200),
        ("viewer", 200),
        ("outsider", 404),
    ],
)
def test_tenant_detail_is_404_for_outsiders(api_world, who, status):
    assert api(getattr(api_world, who)).get("/api/v1/tenants/payments/").status_code == status


def test_platform_admin_onboards_a_tenant_through_the_service(api_world):
    response = api(api_world.admin).post(
        "/api/v1/tenants/",
        {
            "slug": "orders",
            "name": "Orders team",
            "owner_groups": ["orders-owners"],
            "member_groups": ["orders-devs"],
            "gitops_repo_url": "https://git.example.com/o.git",
            "gitops_credentials": "tok",
            "allowed_clusters": ["sandbox"],
            "allowed_tiers": ["dev", "prod"],
            "budget_cpu_millis": 4000,
        },
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "orders" and body["gitops_credentials_set"] is True
    assert sorted(body["allowed_tiers"]) == ["dev", "prod"]
    event = AuditEvent.objects.get(action="tenant.onboard")
    assert event.actor == api_world.admin and "tok" not in str(event.after)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"slug": "Bad Slug", "name": "x"}, "slug"),
        ({"slug": "payments", "name": "x"}, "slug"),
        ({"slug": "ok", "name": "x", "budget_cpu_millis": -1}, "budget_cpu_millis"),
        ({"slug": "ok", "name": "x", "budget_cpu_millis": 10**30}, "budget_cpu_millis"),
        ({"slug": "ok", "name": "x", "allowed_tiers": ["gold"]}, "allowed_tiers"),
        ({"slug": "ok", "name": "x", "notify_emails": ["not-an-address"]}, "notify_emails.0"),
        ({"slug": "kube", "name": "x"}, "slug"),
    ],
)
def test_onboarding_errors_name_the_field(api_world, body, field):
    response = api(api_world.admin).post("/api/v1/tenants/", body, format="json")
    assert field in assert_problem(response, 400, "validation-error")["errors"]


def test_members_cannot_onboard_or_change_tenants(api_world):
    client = api(api_world.owner)
    assert_problem(client.post("/api/v1/tenants/", {"slug": "x", "name": "x"}, format="json"), 403)
    assert_problem(client.patch("/api/v1/tenants/payments/", {"name": "Mine"}, format="json"), 403)


def test_platform_admin_changes_groups_and_budget_audited(api_world):
    response = api(api_world.admin).patch(
        "/api/v1/tenants/payments/",
        {
            "member_groups": ["payments-devs", "payments-contractors"],
            "budget_namespaces": 25,
            "allowed_tiers": ["dev"],
            "webhook_secret": "hush",
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    tenant = Tenant.objects.get(slug="payments")
    assert tenant.member_groups == ["payments-devs", "payments-contractors"]
    assert tenant.budget_namespaces == 25 and tenant.webhook_secret == "hush"
    assert list(tenant.allowed_tiers.values_list("slug", flat=True)) == ["dev"]
    event = AuditEvent.objects.get(action="tenant.update")
    before = DEMO_BUDGET["budget_namespaces"]  # the demo's
    assert event.after["budget_namespaces"] == 25 and event.before["budget_namespaces"] == before
    assert event.after["webhook_secret"] == "(set)" and "hush" not in str(event.after)
    assert response.json()["webhook_secret_set"] is True


def test_clusters_are_for_platform_admins_and_credentials_are_write_only(api_world):
    client = api(api_world.admin)
    created = client.post(
        "/api/v1/clusters/",
        {
            "name": "prod-eu",
            "api_url": "https://k8s.example.com:6443",
            "credentials": "sa-token-123",
            "ca_certificate": "-----BEGIN CERTIFICATE-----",
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["credentials_set"] is True
    assert "sa-token-123" not in created.content.decode()
    assert Cluster.objects.get(name="prod-eu").credentials == "sa-token-123"
    assert AuditEvent.objects.filter(action="cluster.create").exists()

    changed = client.patch("/api/v1/clusters/prod-eu/", {"plan_only": True}, format="json")
    assert changed.json()["plan_only"] is True
    assert "sa-token-123" not in client.get("/api/v1/clusters/").content.decode()

    for who in ("owner", "member"):
        assert_problem(api(getattr(api_world, who)).get("/api/v1/clusters/"), 403)


def test_cluster_with_a_bad_url_is_400(api_world):
    response = api(api_world.admin).post(
        "/api/v1/clusters/", {"name": "x", "api_url": "ftp://x"}, format="json"
    )
    assert "api_url" in assert_problem(response, 400)["errors"]


def test_tiers_are_readable_by_every_member(api_world):
    body = api(api_world.viewer).get("/api/v1/tiers/").json()
    assert [tier["slug"] for tier in body["results"]] == ["review", "dev", "staging", "prod"]
    assert api(api_world.viewer).get("/api/v1/tiers/prod/").json()["max_cpu_millis"] == 16000
