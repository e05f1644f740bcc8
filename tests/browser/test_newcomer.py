"""What a newcomer's browser notices on every page: no failed request (the icon included),
no console error, and a confirmation after signing out, whichever way they signed in.

Signing out of a session made at the identity provider (RP-initiated logout, back to the
sign-in page) is tested with the provider in tests/browser/test_signin.py."""

import pytest

from tenants import demo
from tenants.models import User
from tests.support.browser import needs_chromium, signed_in_page

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.django_db(transaction=True)]

PAGES = [
    "/",
    "/tenants/payments/",
    "/tenants/payments/request/",
    "/tenants/payments/request/namespace/",
    "/approvals/",
    "/tokens/",
]
SIGNED_OUT = "You are signed out of Berth. Sign in again below."
BREAK_GLASS_PASSWORD = "break-glass-for-the-test"


def watched(page):
    """Every answer of 400 or more and every console error the page meets from now on."""
    problems: list[str] = []
    page.on(
        "response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    return problems


def test_pages_load_without_a_failed_request_or_console_error(live_server, browser):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    problems = watched(page)

    for path in PAGES:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    icon = page.locator("link[rel=icon]").get_attribute("href")
    by_old_name = page.request.get(f"{live_server.url}/favicon.ico")

    assert problems == []
    assert (
        page.request.get(f"{live_server.url}{icon}")
        .headers["content-type"]
        .startswith("image/svg+xml")
    )
    assert by_old_name.ok and by_old_name.url.endswith(icon)


def test_signing_out_says_so_with_a_way_back_in(live_server, browser, settings):
    settings.OIDC_ISSUER = "https://idp.example.com/realms/acme"  # only named, never asked
    settings.OIDC_RP_CLIENT_ID = "berth"
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    page.goto(f"{live_server.url}/")
    problems = watched(page)

    page.click("text=Sign out")
    page.wait_for_url(f"{live_server.url}/login/")

    assert page.locator(".message-success").inner_text() == SIGNED_OUT
    assert page.locator("a.button", has_text="Sign in with").count() == 1
    assert page.locator("link[rel=icon]").count() == 1  # the sign-in page has the icon too
    assert problems == []
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url  # and signed out it is
    assert page.locator(".message-success").count() == 0  # said once


def test_break_glass_admin_logging_out_of_the_admin_is_told_so(live_server, browser):
    User.objects.create_superuser("admin", password=BREAK_GLASS_PASSWORD)
    page = browser.new_context().new_page()
    problems = watched(page)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", BREAK_GLASS_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")

    page.click("#logout-form button")  # the admin's own "Log out"
    page.wait_for_url(f"{live_server.url}/login/")

    assert page.locator(".message-success").inner_text() == SIGNED_OUT
    assert page.locator("a[href^='/admin/']", has_text="/admin/").count() == 1  # back in
    assert problems == []
    page.goto(f"{live_server.url}/admin/")
    assert "/admin/login/" in page.url
