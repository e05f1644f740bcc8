"""Merge-request mode's settings: platform admins turn it on per tenant (API and admin) with a
forge credential kept encrypted and never shown back, per tier where a tier's setting wins,
and Berth refuses a tenant in the mode it could not open a pull request for."""

from __future__ import annotations

import pytest

from tenants.models import AuditEvent, EnvironmentTier, Tenant, User
from tests.support.admin_forms import admin_add_form
from tests.support.api import api, assert_problem
from tests.tenants.test_secrets_at_rest import raw_column

FORGE_TOKEN = "ghp_forgeTokenValue0123456789abcdef"
HOOK_SECRET = "hook-Secr3t-value"
FORGE = {
    "gitops_repo_url": "http://127.0.0.1:8002/acme/payments-gitops.git",
    "changes_by_pull_request": True,
    "forge_kind": "github",
    "forge_api_url": "http://127.0.0.1:8003/api/v3",
    "forge_token": FORGE_TOKEN,
    "forge_webhook_secret": HOOK_SECRET,
}


def test_a_platform_admin_puts_a_tenant_in_merge_request_mode_and_the_secrets_stay_hidden(
    api_world,
):
    response = api(api_world.admin).patch("/api/v1/tenants/payments/", FORGE, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["changes_by_pull_request"] is True
    assert body["forge_api_url"] == FORGE["forge_api_url"]
    assert body["forge_token_set"] is True and body["forge_webhook_secret_set"] is True
    assert FORGE_TOKEN not in str(body) and HOOK_SECRET not in str(body)
    tenant = Tenant.objects.get(slug="payments")
    assert tenant.forge_token == FORGE_TOKEN
    for column in ("forge_token", "forge_webhook_secret"):
        stored = raw_column("tenants_tenant", column, tenant.pk)
        assert stored and FORGE_TOKEN not in stored and HOOK_SECRET not in stored
    event = AuditEvent.objects.get(action="tenant.update")
    assert event.after["forge_token"] == "(set)" and FORGE_TOKEN not in str(event.after)
    assert event.after["changes_by_pull_request"] is True
    member_view = api(api_world.member).get("/api/v1/tenants/payments/").json()
    assert FORGE_TOKEN not in str(member_view) and "forge_token" not in member_view


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        ({"forge_api_url": ""}, "forge_api_url"),
        ({"forge_token": ""}, "forge_token"),
        ({"forge_kind": "bitbucket"}, "forge_kind"),  # not a forge Berth speaks
        ({"gitops_repo_url": ""}, "changes_by_pull_request"),
    ],
)
def test_merge_request_mode_without_a_usable_forge_is_refused_naming_the_field(
    api_world, missing, field
):
    response = api(api_world.admin).patch(
        "/api/v1/tenants/payments/", {**FORGE, **missing}, format="json"
    )

    assert_problem(response, 400)
    assert field in str(response.json()), response.json()
    assert Tenant.objects.get(slug="payments").changes_by_pull_request is False


def test_a_forge_api_url_on_a_network_berth_may_not_reach_is_refused(api_world, settings):
    settings.BERTH_EGRESS_ALLOW = []
    response = api(api_world.admin).patch(
        "/api/v1/tenants/payments/",
        FORGE,
        format="json",
    )
    assert_problem(response, 400)
    assert "forge_api_url" in str(response.json())


def test_the_admin_keeps_the_forge_token_encrypted_and_never_shows_it_back(client, db):
    root = User.objects.create_superuser("root", "root@example.com", "break-glass-password")
    client.force_login(root)
    added = client.post(
        "/admin/tenants/tenant/add/",
        admin_add_form(
            gitops_repo_url=FORGE["gitops_repo_url"],
            changes_by_pull_request="on",
            forge_api_url=FORGE["forge_api_url"],
            forge_token=FORGE_TOKEN,
            forge_webhook_secret=HOOK_SECRET,
        ),
    )
    assert added.status_code == 302, added.context["adminform"].form.errors
    tenant = Tenant.objects.get(slug="ledger")
    assert tenant.changes_by_pull_request and tenant.forge_token == FORGE_TOKEN
    assert FORGE_TOKEN not in raw_column("tenants_tenant", "forge_token", tenant.pk)

    page = client.get(f"/admin/tenants/tenant/{tenant.pk}/change/").content.decode()
    assert FORGE_TOKEN not in page and HOOK_SECRET not in page
    assert "leave blank to keep the current value" in page
    # Saved again with the secret fields blank: the stored ones stay.
    kept = client.post(
        f"/admin/tenants/tenant/{tenant.pk}/change/",
        admin_add_form(
            gitops_repo_url=FORGE["gitops_repo_url"],
            changes_by_pull_request="on",
            forge_api_url=FORGE["forge_api_url"],
        ),
    )
    assert kept.status_code == 302, kept.context["adminform"].form.errors
    tenant.refresh_from_db()
    assert tenant.forge_token == FORGE_TOKEN and tenant.forge_webhook_secret == HOOK_SECRET


def test_a_tier_says_whether_its_changes_need_a_pull_request(api_world):
    prod = EnvironmentTier.objects.get(slug="prod")
    assert prod.changes_by_pull_request is None  # unset: each tenant's own setting
    tiers = {t["slug"]: t for t in api(api_world.member).get("/api/v1/tiers/").json()["results"]}
    assert tiers["prod"]["changes_by_pull_request"] is None
    EnvironmentTier.objects.filter(slug="prod").update(changes_by_pull_request=True)
    tiers = {t["slug"]: t for t in api(api_world.member).get("/api/v1/tiers/").json()["results"]}
    assert tiers["prod"]["changes_by_pull_request"] is True
