"""The audit log in headless Chromium: a platform admin reads the newest hundred events,
follows "Older events" and comes back with "Newer events", a filter kept all the way."""

import pytest
from playwright.sync_api import expect

from tenants.models import User
from tests.support.audit_log import notes
from tests.support.browser import needs_chromium, screenshot, signed_in_page

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.django_db(transaction=True)
def test_an_admin_pages_back_through_the_log_and_forward_again(live_server, browser, demo_world):
    notes(130, tenant=demo_world["tenant"])
    page = signed_in_page(browser, live_server, User.objects.get(username="pat"))
    page.goto(f"{live_server.url}/audit/?action=tenant.note")

    def shown() -> list[str]:
        return page.locator("table.table tbody tr td:nth-child(4)").all_inner_texts()

    newest = shown()
    assert len(newest) == 100 and "note 129" in newest[0]
    assert page.get_by_role("link", name="Newer events").count() == 0

    page.get_by_role("link", name="Older events").click()
    expect(page.locator("table.table tbody tr").first).to_contain_text("note 29")
    older = shown()
    assert len(older) == 30 and "note 29" in older[0] and "note 0" in older[-1]
    assert "action=tenant.note" in page.url
    assert page.get_by_role("link", name="Older events").count() == 0
    screenshot(page, "audit-log-older")

    page.get_by_role("link", name="Newer events").click()
    expect(page.locator("table.table tbody tr").first).to_contain_text("note 129")
    assert shown() == newest
