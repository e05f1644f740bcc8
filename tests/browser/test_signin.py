"""Signing in through the development identity provider, in headless Chromium.

Berth runs in the live server; the provider (django-oidc-provider) in a process of its own.
A developer of one tenant and the platform admin see different tenants on the home page.
"""

import pytest

from portal.auth import discovery
from tenants import demo
from tests.support.browser import needs_chromium, screenshot
from tests.support.oidc_provider import running_dev_idp
from tests.support.oidc_settings import sign_in_at

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def dev_idp(live_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("devidp")
    with running_dev_idp(berth_url=live_server.url, data_dir=data_dir) as issuer:
        yield issuer


@pytest.fixture
def berth(live_server, dev_idp, settings):
    demo.seed(sandbox_api_url="http://127.0.0.1:6550")
    sign_in_at(
        settings,
        dev_idp,
        OIDC_PROVIDER_NAME="Development identity provider",
        BERTH_PLATFORM_ADMIN_GROUPS=[demo.PLATFORM_ADMIN_GROUP],
    )
    yield live_server.url
    discovery.clear_cache()


def sign_in(page, berth: str, username: str) -> None:
    page.goto(f"{berth}/")
    assert "/login/" in page.url
    page.click("text=Sign in with Development identity provider")
    assert page.locator(".banner").inner_text() == (
        "Development identity provider — not for production"
    )
    page.fill("#id_username", username)
    page.fill("#id_password", username * 2)  # the demo password: the username twice
    page.click("button[type=submit]")
    page.wait_for_url(f"{berth}/")


def tenant_slugs(page) -> list[str]:
    return page.locator("table.table tbody tr td:first-child").all_inner_texts()


def test_developer_signs_in_at_the_provider_and_sees_only_their_tenant(berth, page):
    sign_in(page, berth, "dev")

    assert page.locator(".who").inner_text() == "Dana Developer"
    assert tenant_slugs(page) == ["payments"]
    assert "member" in page.locator("table.table tbody").inner_text()
    screenshot(page, "signin-developer")


def test_platform_admin_signs_in_at_the_provider_sees_every_tenant_and_signs_out(berth, page):
    sign_in(page, berth, "pat")

    assert "platform admin" in page.locator(".who").inner_text()
    assert tenant_slugs(page) == ["payments", "search"]
    screenshot(page, "signin-admin")

    page.click("text=Sign out")  # RP-initiated logout: via the provider, back to Berth
    page.wait_for_url(f"{berth}/login/")
    assert "You are signed out of Berth" in page.locator(".message-success").inner_text()
    page.goto(f"{berth}/")
    assert "/login/" in page.url
