"""Signing in end to end over real HTTP: Berth (live server) and a provider in its own process.

A `requests.Session` plays the browser and follows every redirect: Berth's sign-in page →
/oidc/authenticate/ → the provider's authorize → Berth's /oidc/callback/ → home (or the
sign-in-failed page). The provider (tests/support/oidc_provider/) is told who signs in next and,
for the negative tests, what to get wrong.
"""

from __future__ import annotations

import html
import re

import pytest
import requests
from django.contrib.sessions.backends.db import SessionStore

from portal.auth import discovery
from portal.auth.errors import REASONS
from tenants.models import AuditEvent, Membership, User
from tests.support.factories import TenantFactory
from tests.support.oidc_provider import running_test_provider
from tests.support.oidc_settings import sign_in_at

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def provider():
    with running_test_provider() as provider:
        yield provider


@pytest.fixture
def berth(live_server, settings, provider):
    """Berth's URL, configured to sign people in at the test provider."""
    sign_in_at(
        settings,
        provider.url,
        OIDC_PROVIDER_NAME="Test IdP",
        BERTH_PLATFORM_ADMIN_GROUPS=["platform-admins"],
    )
    TenantFactory(
        slug="payments",
        owner_groups=["payments-owners"],
        member_groups=["payments-devs"],
        viewer_groups=["payments-auditors"],
    )
    TenantFactory(slug="search", owner_groups=["search-owners"], member_groups=["search-devs"])
    yield live_server.url
    discovery.clear_cache()


def dana(*groups: str) -> dict:
    return {
        "sub": "idp|dana",
        "preferred_username": "dana",
        "email": "dana@example.com",
        "given_name": "Dana",
        "family_name": "Developer",
        "groups": list(groups),
    }


def sign_in(berth: str, browser: requests.Session | None = None):
    """Open Berth, press "Sign in with …", follow the redirects; the browser and last page."""
    browser = browser or requests.Session()
    page = browser.get(f"{berth}/", timeout=10)
    assert page.url == f"{berth}/login/?next=/"
    start = re.search(r'<a class="button" href="([^"]+)">Sign in with Test IdP</a>', page.text)
    assert start, page.text
    return browser, browser.get(f"{berth}{html.unescape(start.group(1))}", timeout=10)


def signed_in_user(browser: requests.Session) -> User | None:
    """Who Berth's session (as stored in the database) says is signed in, if anyone."""
    keys = [cookie.value for cookie in browser.cookies if cookie.name == "sessionid"]
    if not keys:
        return None
    user_id = SessionStore(session_key=keys[-1]).load().get("_auth_user_id")
    return User.objects.get(pk=user_id) if user_id else None


def roles_of(user: User) -> dict[str, str]:
    return dict(Membership.objects.filter(user=user).values_list("tenant__slug", "role"))


@pytest.mark.processes
def test_groups_at_the_provider_become_tenant_memberships(berth, provider):
    provider.next_login(dana("payments-devs", "search-owners", "unrelated"))

    browser, home = sign_in(berth)

    assert home.url == f"{berth}/"
    assert "Your tenants" in home.text and "payments" in home.text and "search" in home.text
    user = signed_in_user(browser)
    assert user is not None and user.oidc_subject == "idp|dana"
    assert roles_of(user) == {"payments": "member", "search": "owner"}
    assert not user.has_usable_password()
    assert {event.source_ip for event in AuditEvent.objects.filter(action="membership.add")} == {
        "127.0.0.1"
    }
    # The authorization code flow ran with PKCE, state and nonce.
    assert provider.log("token")[-1]["has_code_verifier"]
    assert provider.log("authorize")[-1]["has_nonce"]


def test_group_removed_at_the_provider_removes_the_membership_at_next_sign_in(berth, provider):
    provider.next_login(dana("payments-devs", "search-devs"))
    browser, _ = sign_in(berth)
    assert roles_of(signed_in_user(browser)) == {"payments": "member", "search": "member"}

    provider.next_login(dana("search-devs"))  # dropped from payments-devs at the provider
    browser, home = sign_in(berth)

    assert roles_of(signed_in_user(browser)) == {"search": "member"}
    assert "payments" not in home.text
    assert AuditEvent.objects.filter(action="membership.remove", tenant__slug="payments").exists()


def test_platform_admin_group_shows_every_tenant(berth, provider):
    provider.next_login(dana("platform-admins"))

    browser, home = sign_in(berth)

    assert signed_in_user(browser).is_platform_admin
    assert "platform admin" in home.text
    assert "payments" in home.text and "search" in home.text


def test_signed_in_user_without_tenant_groups_is_told_which_groups_to_ask_for(berth, provider):
    provider.next_login(dana("qa-team"))

    _, home = sign_in(berth)

    assert home.status_code == 200
    assert "You are not in any tenant yet" in home.text
    assert "<code>qa-team</code>" in home.text  # what the provider sent
    assert "<code>payments-devs</code>" in home.text  # what a tenant uses


@pytest.mark.parametrize(
    ("defect", "reason"),
    [
        ("tampered_signature", "token"),
        ("wrong_audience", "audience"),
        ("expired", "expired"),
        ("wrong_issuer", "token"),
        ("wrong_nonce", "nonce"),
        ("no_sub", "subject"),
        ("drop_state", "state"),
        ("access_denied", "provider"),
    ],
)
def test_sign_in_is_refused_with_a_clear_page_and_no_session(berth, provider, defect, reason):
    provider.next_login(dana("payments-devs"), defect=defect)

    browser, page = sign_in(berth)

    assert page.url == f"{berth}/login/failed/?reason={reason}"
    assert "Sign-in failed" in page.text
    assert REASONS[reason] in html.unescape(page.text)
    assert signed_in_user(browser) is None
    assert browser.get(f"{berth}/", timeout=10).url == f"{berth}/login/?next=/"
    assert not User.objects.exists()
    assert not Membership.objects.exists()


def test_a_replayed_callback_signs_nobody_in_and_nobody_out(berth, provider):
    """A callback URL used twice (the back button, a link pasted elsewhere) is spent: it
    signs in no other browser, and it does not end the session of the one that used it
    (a cross-site link to a stale callback must not sign people out)."""
    provider.next_login(dana("payments-devs"))
    browser = requests.Session()
    to_provider = browser.get(f"{berth}/oidc/authenticate/", allow_redirects=False, timeout=10)
    back = browser.get(to_provider.headers["Location"], allow_redirects=False, timeout=10)
    callback = back.headers["Location"]
    browser.get(callback, timeout=10)
    assert signed_in_user(browser) is not None

    replay = browser.get(callback, timeout=10)

    assert replay.url == f"{berth}/"
    assert signed_in_user(browser) is not None
    stranger = requests.Session()
    assert stranger.get(callback, timeout=10).url == f"{berth}/login/failed/?reason=state"
    assert signed_in_user(stranger) is None


def test_callback_from_a_browser_that_did_not_start_the_sign_in_is_refused(berth, provider):
    provider.next_login(dana("payments-devs"))
    victim = requests.Session()
    to_provider = victim.get(f"{berth}/oidc/authenticate/", allow_redirects=False, timeout=10)
    callback = victim.get(to_provider.headers["Location"], allow_redirects=False, timeout=10)

    attacker = requests.Session()
    page = attacker.get(callback.headers["Location"], timeout=10)

    assert page.url == f"{berth}/login/failed/?reason=state"
    assert signed_in_user(attacker) is None
    assert not User.objects.exists()


def test_sign_out_ends_the_session_at_the_provider_too(berth, provider):
    provider.next_login(dana("payments-devs"))
    browser, _ = sign_in(berth)
    csrf = next(cookie.value for cookie in browser.cookies if cookie.name == "csrftoken")

    page = browser.post(f"{berth}/oidc/logout/", data={"csrfmiddlewaretoken": csrf}, timeout=10)

    end_session = provider.log("end_session")[-1]
    assert end_session["id_token_hint"]
    assert end_session["post_logout_redirect_uri"] == f"{berth}/login/"
    assert page.url == f"{berth}/login/"
    assert signed_in_user(browser) is None


def test_discovery_document_is_fetched_once_for_many_sign_ins(berth, provider):
    fetched = len(provider.log("discovery"))
    for _ in range(3):
        provider.next_login(dana("payments-devs"))
        sign_in(berth)

    assert len(provider.log("discovery")) == fetched + 1
