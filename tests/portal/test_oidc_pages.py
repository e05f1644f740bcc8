"""The sign-in, sign-in-failed and sign-out behaviour that needs no provider running."""

import os

import pytest
from django.test import RequestFactory

from portal.auth import discovery
from portal.auth.logout import provider_logout_url
from tenants.models import User
from tests.support.factories import TenantFactory, UserFactory
from tests.support.oidc_provider import free_port
from tests.support.portal_startup import setup_django

PASSWORD = "break-glass-password-for-test"


@pytest.fixture
def oidc_configured(settings):
    settings.OIDC_ISSUER = "https://idp.example.com/realms/acme"
    settings.OIDC_RP_CLIENT_ID = "berth"
    settings.OIDC_RP_CLIENT_SECRET = "secret"
    settings.OIDC_PROVIDER_NAME = "Acme SSO"
    discovery.clear_cache()
    yield settings
    discovery.clear_cache()


def test_sign_in_page_says_single_sign_on_is_not_configured_and_what_to_set(client, db):
    page = client.get("/login/").content.decode()

    assert "Single sign-on is not configured" in page
    for variable in ("OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "OIDC_GROUPS_CLAIM"):
        assert variable in page
    assert "http://testserver/oidc/callback/" in page
    assert 'href="/admin/login/?next=/"' in page  # the break-glass login


def test_sign_in_page_offers_the_provider_when_configured(client, db, oidc_configured):
    page = client.get("/login/?next=/admin/").content.decode()

    assert "Sign in with Acme SSO" in page
    assert 'href="/oidc/authenticate/?next=%2Fadmin%2F"' in page
    assert "not configured" not in page


def test_sign_in_page_ignores_a_next_url_on_another_site(client, db, oidc_configured):
    page = client.get("/login/?next=https://evil.example.com/").content.decode()
    assert "evil.example.com" not in page


def test_signed_in_user_visiting_the_sign_in_page_goes_home(client, db):
    client.force_login(UserFactory())
    response = client.get("/login/")
    assert response.status_code == 302 and response["Location"] == "/"


def test_failure_page_explains_a_known_reason(client, db):
    page = client.get("/login/failed/?reason=expired").content.decode()

    assert "Sign-in failed" in page
    assert "ID token had expired" in page
    assert "<code>expired</code>" in page
    assert "Sign in again" in page


def test_failure_page_never_echoes_an_unknown_reason(client, db):
    page = client.get("/login/failed/?reason=<script>alert(1)</script>").content.decode()

    assert "Something unexpected went wrong" in page
    assert "alert(1)" not in page


def test_starting_sign_in_while_the_provider_is_unreachable_shows_the_failure_page(
    client, db, oidc_configured
):
    oidc_configured.OIDC_ISSUER = f"http://127.0.0.1:{free_port()}"  # nothing listens there

    response = client.get("/oidc/authenticate/")

    assert response.status_code == 302
    assert response["Location"] == "/login/failed/?reason=unreachable"


def test_break_glass_sign_out_is_a_plain_logout(client, db):
    User.objects.create_superuser("admin", "admin@example.com", PASSWORD)
    client.login(username="admin", password=PASSWORD)

    response = client.post("/oidc/logout/")

    assert response.status_code == 302 and response["Location"] == "/login/"
    assert "_auth_user_id" not in client.session


def test_sign_out_of_an_oidc_session_goes_to_the_providers_end_session_endpoint(
    db, oidc_configured
):
    for name, url in {
        "OIDC_OP_AUTHORIZATION_ENDPOINT": "/auth",
        "OIDC_OP_TOKEN_ENDPOINT": "/token",
        "OIDC_OP_USER_ENDPOINT": "/userinfo",
        "OIDC_OP_JWKS_ENDPOINT": "/certs",
        "OIDC_OP_LOGOUT_ENDPOINT": "/logout",
    }.items():  # all explicit: nothing to discover
        setattr(oidc_configured, name, f"https://idp.example.com/realms/acme/protocol{url}")
    oidc_configured.ALLOWED_HOSTS = ["berth.example.com"]
    request = RequestFactory().post("/oidc/logout/", HTTP_HOST="berth.example.com", secure=True)
    request.session = {"oidc_id_token": "header.payload.signature"}

    url = provider_logout_url(request)

    assert url == (
        "https://idp.example.com/realms/acme/protocol/logout"
        "?id_token_hint=header.payload.signature"
        "&post_logout_redirect_uri=https%3A%2F%2Fberth.example.com%2Flogin%2F"
        "&client_id=berth"
    )


def test_empty_home_page_names_the_users_groups_and_the_groups_tenants_use(client, db):
    TenantFactory(
        slug="payments", owner_groups=["payments-owners"], member_groups=["payments-devs"]
    )
    client.force_login(UserFactory(username="newcomer"))
    session = client.session
    session["berth_signin_groups"] = ["qa-team", "everyone"]
    session.save()

    page = client.get("/").content.decode()

    assert "You are not in any tenant yet" in page
    assert "<code>qa-team</code>, <code>everyone</code>" in page
    assert "<code>payments-owners</code>" in page and "<code>payments-devs</code>" in page


@pytest.mark.processes
def test_half_configured_single_sign_on_refuses_to_start(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("OIDC_")}
    env.update(
        DJANGO_SETTINGS_MODULE="portal.settings",
        BERTH_DEBUG="1",
        BERTH_DATA_DIR=str(tmp_path),
        OIDC_ISSUER="https://idp.example.com",
    )
    result = setup_django(env)
    assert result.returncode != 0
    assert "set OIDC_CLIENT_ID, OIDC_CLIENT_SECRET as well" in result.stderr
