"""The home page as a person sees it, in headless Chromium."""

import pytest

from tenants import demo
from tenants.models import User
from tests.support.browser import needs_chromium, screenshot

pytestmark = [pytest.mark.browser, needs_chromium]

PASSWORD = "break-glass-password-for-test"


@pytest.mark.django_db(transaction=True)
def test_break_glass_admin_signs_in_and_sees_every_tenant(live_server, page):
    demo.seed(sandbox_api_url="http://127.0.0.1:6550")
    User.objects.create_superuser("admin", "admin@example.com", PASSWORD)

    page.goto(f"{live_server.url}/")
    # Single sign-on is not configured here: the sign-in page links to the break-glass login.
    assert "/login/" in page.url
    page.click("text=sign in with a password at /admin/")
    assert "/admin/login/" in page.url
    page.fill("#id_username", "admin")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/")

    rows = page.locator("table.table tbody tr")
    assert rows.count() == 2
    assert page.locator("h1").inner_text() == "Your tenants"
    assert "payments" in rows.nth(0).inner_text()
    assert "search" in rows.nth(1).inner_text()
    # The stylesheet is served by the app itself, not a CDN.
    assert (
        page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor")
        == "rgb(8, 63, 120)"
    )
    screenshot(page, "home-admin")
