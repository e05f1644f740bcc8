"""The truth table in headless Chromium: after a quota edited by hand, a file deleted from
the repository and an object left behind with Berth's labels, a platform admin refreshes
the table, sees the three, and repairs. The screenshot in docs/truth-table.md comes from
here."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.support.browser import docs_screenshot, needs_chromium, signed_in_page
from tests.support.drift import delete_file, hand_edit_quota, orphan_config_map
from tests.support.gitserver import files_on

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.django_db(transaction=True)
def test_an_admin_finds_the_three_disagreements_and_repairs(
    live_server, browser, provisioned, sandbox, tmp_path
):
    files = files_on(provisioned["bare"])
    deleted = sorted(
        p for p in files if p.startswith("apps/shop/") and files[p].startswith("# Managed by Berth")
    )[0]
    hand_edit_quota(sandbox)
    delete_file(provisioned, tmp_path, deleted)
    orphan_config_map(sandbox)

    page = signed_in_page(browser, live_server, provisioned["admin"])
    page.goto(f"{live_server.url}/tenants/payments/")
    page.click("text=Truth table")
    page.click("text=Refresh now")
    page.wait_for_selector("#truth")
    states = {row.get_attribute("data-state") for row in page.locator("tr.truth-row").all()}
    assert states == {"in_sync", "drifted", "missing_in_git", "orphan"}
    first = page.locator("tr.truth-row").nth(0).inner_text()  # worst first
    assert "ResourceQuota/payments-shop-dev/berth-quota" in first
    assert "spec.hard.requests.cpu" in first
    assert deleted in page.inner_text("tr[data-state=missing_in_git]")
    assert "left-behind" in page.inner_text("tr[data-state=orphan]")
    serious = [
        v["id"]
        for v in Axe().run(page).response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert serious == []

    page.goto(f"{live_server.url}/tenants/payments/truth/?namespace=payments-shop-dev")
    assert page.locator("tr.truth-row").count() < 40
    docs_screenshot(page, "truth-table")

    page.click("button:has-text('Repair')")
    assert "Repair requested: #" in page.inner_text(".messages")
