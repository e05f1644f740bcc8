"""What a newcomer's browser notices on every page: no failed request (the icon included),
no console error, and a confirmation after signing out."""

import pytest

from tenants import demo
from tenants.models import User
from tests.browser import needs_chromium, signed_in_page

pytestmark = [pytest.mark.browser, needs_chromium]

PAGES = ["/", "/tenants/payments/", "/tenants/payments/request/",
         "/tenants/payments/request/namespace/", "/approvals/", "/tokens/"]


@pytest.mark.django_db(transaction=True)
def test_pages_load_without_a_failed_request_or_console_error(live_server, browser):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    failed, errors = [], []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400
            else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    for path in PAGES:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    icon = page.locator("link[rel=icon]").get_attribute("href")
    by_old_name = page.request.get(f"{live_server.url}/favicon.ico")

    assert failed == [] and errors == []
    assert page.request.get(f"{live_server.url}{icon}").headers["content-type"].startswith(
        "image/svg+xml")
    assert by_old_name.ok and by_old_name.url.endswith(icon)


@pytest.mark.django_db(transaction=True)
def test_signing_out_says_so(live_server, browser):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    page.goto(f"{live_server.url}/")

    page.click("text=Sign out")
    page.wait_for_url(f"{live_server.url}/login/")

    assert "You are signed out of Berth" in page.locator(".message-success").inner_text()
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url  # and signed out it is
    assert page.locator(".message-success").count() == 0  # said once
