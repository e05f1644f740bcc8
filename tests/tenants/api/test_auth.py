"""Who can call the API: API tokens (unknown, expired, revoked, deactivated), the browser's
session with CSRF, and OIDC access tokens signed by a real provider process."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from portal.auth import discovery
from tenants import services
from tenants.models import ApiToken, Membership, User
from tests.support.api import NAMESPACE, api, assert_problem, token_for
from tests.support.id_tokens import tokens_from
from tests.support.oidc_provider import API_AUDIENCE, CLIENT_ID, running_test_provider
from tests.support.oidc_settings import sign_in_at

ME = "/api/v1/me/"


# --- API tokens ----------------------------------------------------------------------------


def test_anonymous_gets_401_with_a_bearer_challenge(api_world):
    response = APIClient().get("/api/v1/requests/")
    assert_problem(response, 401, "not-authenticated")
    assert response["WWW-Authenticate"] == 'Bearer realm="berth"'


@pytest.mark.parametrize(
    "header",
    [
        "Bearer berth_not-a-real-token",
        "Bearer something-else",
        "Bearer",
        "Bearer two parts",
    ],
)
def test_an_unknown_or_malformed_token_is_401(api_world, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert_problem(client.get(ME), 401, "authentication-failed")


def test_basic_auth_is_not_a_way_in(api_world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic ZGV2OmRldmRldg==")
    assert_problem(client.get(ME), 401, "not-authenticated")


def test_an_expired_token_is_401(api_world):
    value = token_for(api_world.member)
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    body = assert_problem(api(token=value).get(ME), 401, "authentication-failed")
    assert "expired" in body["detail"]


def test_a_revoked_token_is_401_at_once(api_world):
    value = token_for(api_world.member)
    client = api(token=value)
    assert client.get(ME).status_code == 200

    services.revoke_api_token(actor=api_world.member, token=ApiToken.objects.get())

    body = assert_problem(client.get(ME), 401, "authentication-failed")
    assert "revoked" in body["detail"]


def test_a_deactivated_users_token_is_401(api_world):
    value = token_for(api_world.member)
    User.objects.filter(pk=api_world.member.pk).update(is_active=False)
    assert_problem(api(token=value).get(ME), 401)


def test_only_the_hash_of_a_token_is_stored(api_world):
    value = token_for(api_world.member, scopes=["read"])
    token = ApiToken.objects.get()
    assert value.startswith("berth_") and len(value) > 40
    assert token.digest == hashlib.sha256(value.encode()).hexdigest()
    assert token.prefix == value[:14] and value not in str(vars(token))


def test_last_use_is_recorded_at_most_once_a_minute(api_world, django_assert_num_queries):
    value = token_for(api_world.member)
    client = api(token=value)
    client.get(ME)
    first = ApiToken.objects.get().last_used_at
    assert first is not None

    client.get(ME)
    assert ApiToken.objects.get().last_used_at == first  # within the minute: no write

    ApiToken.objects.update(last_used_at=first - timedelta(minutes=2))
    client.get(ME)
    assert ApiToken.objects.get().last_used_at > first - timedelta(minutes=2)


# --- the browser's session -----------------------------------------------------------------


def test_a_signed_in_browser_may_use_the_api_with_csrf(api_world):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(api_world.member)
    assert client.get(ME).json()["authentication"] == "session"
    body = {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE}

    refused = client.post("/api/v1/requests/", body, format="json")
    assert_problem(refused, 403, "forbidden")
    assert "CSRF" in refused.json()["detail"]

    client.get("/tokens/")  # any page sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    accepted = client.post("/api/v1/requests/", body, format="json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201, accepted.json()


# --- OIDC access tokens --------------------------------------------------------------------


@pytest.fixture(scope="module")
def provider():
    with running_test_provider() as provider:
        yield provider


@pytest.fixture
def oidc(settings, provider):
    sign_in_at(settings, provider.url, OIDC_API_AUDIENCE=API_AUDIENCE)
    yield provider
    discovery.clear_cache()


def jwt_from(provider, claims: dict, defect: str | None = None, **login) -> str:
    """An access token signed by the provider's key (RFC 9068 unless said otherwise)."""
    return tokens_from(provider, claims, defect, **login)["access_token"]


def dev_claims(**extra) -> dict:
    return {"sub": "devidp-dev", "preferred_username": "dev", **extra}


@pytest.mark.processes
def test_an_access_token_from_the_provider_acts_as_the_user_with_every_scope(api_world, oidc):
    client = api(token=jwt_from(oidc, dev_claims()))

    body = client.get(ME).json()

    assert body["username"] == "dev" and body["authentication"] == "oidc_access_token"
    assert body["scopes"] == ["read", "request", "approve", "admin"]
    created = client.post(
        "/api/v1/requests/",
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )
    assert created.status_code == 201, created.json()


def test_an_access_token_does_not_sync_memberships_from_its_groups(api_world, oidc):
    token = jwt_from(oidc, dev_claims(groups=["search-devs", "platform-admins"]))
    body = api(token=token).get(ME).json()
    assert body["memberships"] == [{"tenant": "payments", "role": "member"}]
    assert body["is_platform_admin"] is False
    assert list(
        Membership.objects.filter(user=api_world.member).values_list("tenant__slug", flat=True)
    ) == ["payments"]


@pytest.mark.parametrize(
    ("defect", "words"),
    [
        ("expired", "expired"),
        ("wrong_audience", "not for Berth"),
        ("tampered_signature", "signature"),
        ("wrong_issuer", "issuer"),
    ],
)
def test_a_bad_access_token_is_401(api_world, oidc, defect, words):
    body = assert_problem(
        api(token=jwt_from(oidc, dev_claims(), defect)).get(ME), 401, "authentication-failed"
    )
    assert words in body["detail"]


def test_an_access_token_for_another_audience_is_401(api_world, oidc, settings):
    settings.OIDC_API_AUDIENCE = "another-api"
    body = assert_problem(api(token=jwt_from(oidc, dev_claims())).get(ME), 401)
    assert "not for Berth's API" in body["detail"]


def test_an_id_token_is_not_an_api_credential(api_world, oidc):
    """Whatever a browser sign-in received is useless against the API: the ID token names
    Berth's client, carries a nonce, and is typed as a plain JWT."""
    id_token = tokens_from(oidc, dev_claims())["id_token"]
    body = assert_problem(api(token=id_token).get(ME), 401, "authentication-failed")
    assert "not for Berth's API" in body["detail"]


def test_an_id_token_is_refused_even_where_the_client_audience_is_accepted(
    api_world, oidc, settings
):
    settings.OIDC_API_AUDIENCE = CLIENT_ID
    settings.OIDC_API_ACCEPT_CLIENT_AUDIENCE = True
    id_token = tokens_from(oidc, dev_claims())["id_token"]
    body = assert_problem(api(token=id_token).get(ME), 401)
    assert "it is an ID token" in body["detail"]


def test_an_untyped_access_token_for_the_api_audience_is_accepted(api_world, oidc):
    """Keycloak and Entra ID type their access tokens as plain JWTs: the audience tells."""
    token = jwt_from(oidc, dev_claims(), access_token_form="jwt")
    assert api(token=token).get(ME).json()["username"] == "dev"


def test_an_untyped_token_whose_only_audience_is_the_client_is_refused(api_world, oidc, settings):
    settings.OIDC_API_AUDIENCE = CLIENT_ID
    token = jwt_from(oidc, dev_claims(), access_token_form="jwt", audience=CLIENT_ID)
    body = assert_problem(api(token=token).get(ME), 401)
    assert "only audience is Berth's client id" in body["detail"]
    settings.OIDC_API_ACCEPT_CLIENT_AUDIENCE = True  # the operator opts in
    assert api(token=token).get(ME).status_code == 200


def test_a_typed_access_token_for_the_client_is_enough_while_no_api_audience_is_set(
    api_world, oidc, settings
):
    settings.OIDC_API_AUDIENCE = ""
    typed = jwt_from(oidc, dev_claims(), audience=CLIENT_ID)
    assert api(token=typed).get(ME).status_code == 200
    untyped = jwt_from(oidc, dev_claims(), access_token_form="jwt", audience=CLIENT_ID)
    body = assert_problem(api(token=untyped).get(ME), 401)
    assert "OIDC_API_AUDIENCE is not set" in body["detail"]


def test_an_access_token_never_creates_a_user(api_world, oidc):
    token = jwt_from(oidc, {"sub": "idp|stranger", "preferred_username": "stranger"})
    body = assert_problem(api(token=token).get(ME), 401)
    assert "sign in to Berth" in body["detail"]
    assert not User.objects.filter(username="stranger").exists()


def test_access_tokens_are_refused_when_single_sign_on_is_off(api_world, provider, settings):
    settings.OIDC_ISSUER = ""
    token = jwt_from(provider, dev_claims())
    assert_problem(api(token=token).get(ME), 401, "authentication-failed")


ENDPOINTS = [
    ("get", "/api/v1/me/"),
    ("get", "/api/v1/tenants/"),
    ("post", "/api/v1/tenants/"),
    ("get", "/api/v1/tenants/payments/"),
    ("patch", "/api/v1/tenants/payments/"),
    ("get", "/api/v1/clusters/"),
    ("post", "/api/v1/clusters/"),
    ("get", "/api/v1/clusters/sandbox/"),
    ("patch", "/api/v1/clusters/sandbox/"),
    ("get", "/api/v1/tiers/"),
    ("get", "/api/v1/tiers/dev/"),
    ("get", "/api/v1/requests/"),
    ("post", "/api/v1/requests/"),
    ("get", "/api/v1/requests/{id}/"),
    ("get", "/api/v1/requests/{id}/runs/"),
    ("post", "/api/v1/requests/{id}/approve/"),
    ("post", "/api/v1/requests/{id}/reject/"),
    ("post", "/api/v1/requests/{id}/cancel/"),
    ("post", "/api/v1/requests/{id}/comment/"),
    ("post", "/api/v1/requests/{id}/retry/"),
    ("get", "/api/v1/namespaces/"),
    ("get", "/api/v1/projects/"),
    ("get", "/api/v1/audit-events/"),
]


@pytest.mark.parametrize("credential", ["none", "expired", "revoked"])
@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_wants_valid_credentials(api_world, credential, method, path):
    from tests.support.api import submit

    tenancy_request = submit(api_world, tier="prod")
    client = APIClient()
    if credential != "none":
        value = token_for(api_world.admin)
        token = ApiToken.objects.get()
        if credential == "expired":
            token.expires_at = timezone.now() - timedelta(minutes=1)
            token.save()
        else:
            services.revoke_api_token(actor=api_world.admin, token=token)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {value}")

    response = getattr(client, method)(path.format(id=tenancy_request.pk), {}, format="json")

    assert_problem(response, 401)
    assert response["WWW-Authenticate"] == 'Bearer realm="berth"'
