"""Upgrade campaigns in headless Chromium: a platform admin starts one for a changed tier,
reads its grouped diffs, a second admin approves, the rollout pauses at a failure, and the
tenant sees on the namespace what it runs and what is due. The screenshots in
docs/upgrade-campaigns.md come from here."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from provisioning.jobs import campaigns as engine_campaigns
from tenants.models import EnvironmentTier, User
from tests.support.browser import docs_screenshot, needs_chromium, signed_in_page
from tests.support.cluster import as_admin

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.django_db(transaction=True)
def test_two_admins_start_approve_and_watch_a_campaign_pause(
    live_server, browser, prod_change, sandbox
):
    quota = "/api/v1/namespaces/payments-cart-prod/resourcequotas/berth-quota"
    edited = as_admin(sandbox, "GET", quota)
    edited["spec"]["hard"]["limits.cpu"] = "4"
    edited["metadata"].pop("managedFields", None)
    as_admin(sandbox, "PUT", quota, edited)

    page = signed_in_page(browser, live_server, prod_change["admin"])
    page.goto(f"{live_server.url}/")
    page.click("nav >> text=Upgrades")
    page.select_option("#id_tier", str(EnvironmentTier.objects.get(slug="prod").pk))
    page.fill("#id_reason", "Production containers default to 1Gi of memory.")
    page.fill("#id_batch", "5")
    page.click("text=Compute the diffs")
    page.wait_for_selector("#groups")
    assert "2 distinct changes over 2 namespaces" in page.inner_text("#groups")
    assert "Another platform admin approves it." in page.inner_text("#moves")
    url = page.url

    second = User.objects.create(username="pia", first_name="Pia", is_platform_admin=True)
    other = signed_in_page(browser, live_server, second)
    other.goto(url)
    other.click("#moves >> text=Approve")
    assert "Approved by pia" in other.inner_text(".messages")
    sandbox.inject_faults(
        403,
        times=None,
        method="PATCH",
        path_contains="/namespaces/payments-shop-prod/",
        message="admission webhook denied the request",
    )
    engine_campaigns.roll(int(url.rstrip("/").rsplit("/", 1)[1]))
    other.reload()
    assert "Paused: payments-shop-prod failed" in other.inner_text("#progress")
    assert other.locator("#targets tr[data-state=failed]").count() == 1
    serious = [
        v["id"]
        for v in Axe().run(other).response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert serious == []
    docs_screenshot(other, "upgrade-campaign")

    # The tenant's side: the namespace where it paused says what it runs and what is due.
    owner = signed_in_page(browser, live_server, prod_change["owner"])
    owner.goto(f"{live_server.url}/")
    owner.click("text=payments")
    owner.click("a >> text=payments-shop-prod")
    definition = owner.inner_text(".definition")
    assert "prod v1 · bundle v1" in definition and "upgrade due" in definition
    assert "the prod tier's definition has changed since v1" in definition
    assert "Upgrade paused here" in owner.inner_text(".campaign-notice")
    docs_screenshot(owner, "namespace-upgrade-due")
