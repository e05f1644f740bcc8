"""The access map in headless Chromium: a platform admin searches a group, reads what it
comes down to on the cluster and in Berth, then asks why an owner may approve. The
screenshots in docs/access-map.md come from here."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.support.browser import docs_screenshot, needs_chromium, signed_in_page

pytestmark = [pytest.mark.browser, needs_chromium]


def no_serious_violations(page) -> None:
    serious = [
        v["id"]
        for v in Axe().run(page).response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert serious == []


@pytest.mark.django_db(transaction=True)
def test_an_admin_follows_a_group_to_its_bindings_and_an_owner_to_her_approval(
    live_server, browser, provisioned, settings
):
    settings.BERTH_PLATFORM_ADMIN_GROUPS = ["platform-admins"]
    page = signed_in_page(browser, live_server, provisioned["admin"])
    page.goto(f"{live_server.url}/")
    page.click("nav >> text=Access")
    page.fill("#access-q", "devs")
    page.click("form[role=search] button")
    page.click("#search-results >> text=payments-devs")
    page.wait_for_selector("#tenant-payments")
    kubernetes = page.locator("#tenant-payments table[data-system=kubernetes]")
    assert kubernetes.locator("tbody tr").count() == 4  # shop-dev, cart-dev/staging, feed-dev
    assert "berth-tenant-edit" in kubernetes.inner_text()
    assert "promote into dev, staging" in page.inner_text("table[data-system=kargo]")
    no_serious_violations(page)
    docs_screenshot(page, "access-group")

    page.click("#people >> text=Dana Developer")
    page.wait_for_selector("#tenant-payments")
    assert "No: only owners and platform admins decide requests" in page.inner_text(
        "#tenant-payments"
    )
    page.goto(f"{live_server.url}/access/?q=olivia")
    page.click("#search-results >> text=Olivia Owner")
    chain = page.inner_text("#tenant-payments .approve-chain")
    assert "payments names payments-owners as an owner group" in chain
    assert "staging-needs-tenant-owner" in chain
    no_serious_violations(page)
    docs_screenshot(page, "access-person")
