"""Upgrade campaigns as people meet them: the pages that start and decide a campaign and show
its notice to the tenant, the API that starts, moves and refuses one, and a cluster that
cannot be read, which makes no campaign and says why."""

from __future__ import annotations

from provisioning.jobs import campaigns as engine_campaigns
from tenants.choices import CampaignState
from tenants.models import EnvironmentTier, Namespace, User


def test_pages_start_decide_and_show_the_notice_to_the_tenant(prod_change, client):
    admin = prod_change["admin"]
    client.force_login(admin)
    bad = client.post("/campaigns/", {"tier": "", "reason": "", "canary": 0, "batch": 10})
    assert bad.status_code == 200
    assert "Say why" not in bad.content.decode()  # the form's own check comes first
    assert "This field is required." in bad.content.decode()
    prod = EnvironmentTier.objects.get(slug="prod")
    made = client.post(
        "/campaigns/",
        {"tier": prod.pk, "reason": "Bigger defaults.", "canary": 1, "batch": 1},
        follow=True,
    )
    html = made.content.decode()
    assert "2 namespace(s) would change" in html and "+      memory: 1Gi" in html
    assert "1 distinct change over 2 namespaces" in html
    assert "Another platform admin approves it." in html
    dashboard = client.get("/dashboard/").content.decode()
    assert "Upgrade campaigns under way" in dashboard and "Awaiting approval" in dashboard

    owner = User.objects.get(username="olivia")
    client.force_login(owner)
    assert client.get("/campaigns/").status_code == 403
    shop = Namespace.objects.get(name="payments-shop-prod")
    page = client.get(f"/namespaces/{shop.pk}/").content.decode()
    assert "Upgrade pending" in page and "Bigger defaults." in page


def test_the_api_starts_moves_and_refuses_as_a_person_expects(prod_change):
    from tests.support.api import api, assert_problem

    admin = api(prod_change["admin"])
    body = assert_problem(
        admin.post("/api/v1/campaigns/", {"tier": "nope", "reason": ""}, format="json"), 400
    )
    assert set(body["errors"]) == {"tier", "reason"}
    made = admin.post(
        "/api/v1/campaigns/",
        {"tier": "prod", "reason": "Bigger defaults.", "canary": 1, "batch": 5},
        format="json",
    )
    assert made.status_code == 201, made.content
    campaign = made.json()
    assert campaign["state"] == "awaiting_approval" and campaign["namespaces"] == 2
    assert [t["wave"] for t in campaign["targets"]] == [1, 2]
    [group] = campaign["groups"]
    assert group["namespaces"] == ["payments-cart-prod", "payments-shop-prod"]
    own = admin.post(f"/api/v1/campaigns/{campaign['id']}/approve/")
    assert_problem(own, 403)
    other = User.objects.create(username="pia", is_platform_admin=True)
    approved = api(other).post(f"/api/v1/campaigns/{campaign['id']}/approve/").json()
    assert approved["state"] == "rolling" and approved["decided_by"] == "pia"
    assert_problem(api(other).post(f"/api/v1/campaigns/{campaign['id']}/resume/"), 409)
    owner = api(User.objects.get(username="olivia"))
    assert_problem(owner.get("/api/v1/campaigns/"), 403)
    assert_problem(owner.get(f"/api/v1/campaigns/{campaign['id']}/"), 403)
    assert engine_campaigns.roll(campaign["id"]) == CampaignState.DONE
    assert admin.get(f"/api/v1/campaigns/{campaign['id']}/").json()["applied"] == 2


def test_a_cluster_that_cannot_be_read_makes_no_campaign_and_says_why(
    prod_change, client, settings
):
    from tenants.models import Cluster, UpgradeCampaign
    from tests.support.api import api, assert_problem

    settings.KUBE_BACKOFF_SECONDS = 0.01
    Cluster.objects.filter(name="sandbox").update(api_url="http://127.0.0.1:9")
    client.force_login(prod_change["admin"])
    page = client.post(
        "/campaigns/",
        {
            "tier": EnvironmentTier.objects.get(slug="prod").pk,
            "reason": "Bigger defaults.",
            "canary": 1,
            "batch": 5,
        },
    )
    assert "The diffs cannot be computed: a cluster could not be read" in page.content.decode()
    body = assert_problem(
        api(prod_change["admin"]).post(
            "/api/v1/campaigns/", {"tier": "prod", "reason": "Bigger defaults."}, format="json"
        ),
        409,
    )
    assert "could not be read" in body["detail"]
    assert not UpgradeCampaign.objects.exists()
