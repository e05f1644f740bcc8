"""Making and revoking API tokens: the page under the user's menu, and the command."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command

from tenants.models import ApiToken, AuditEvent
from tests.support.api import api


def make(client, **data):
    return client.post(
        "/tokens/", {"name": "CI", "scopes": ["read", "request"], "expires": "30", **data}
    )


def shown_token(page: str) -> str:
    return re.search(r'data-testid="new-token">(berth_[^<]+)<', page).group(1)


def test_the_nav_links_to_the_tokens_page(client, api_world):
    client.force_login(api_world.member)
    assert 'href="/tokens/">API tokens</a>' in client.get("/").content.decode()


def test_a_new_token_is_shown_once_and_works(client, api_world):
    client.force_login(api_world.member)
    response = make(client)

    page = response.content.decode()
    value = shown_token(page)
    assert response["Cache-Control"] == "no-store"
    assert "shown only this once" in page
    token = ApiToken.objects.get()
    assert token.scopes == ["read", "request"] and token.expires_at is not None
    assert value not in client.get("/tokens/").content.decode()  # never again
    assert token.prefix in client.get("/tokens/").content.decode()
    assert api(token=value).get("/api/v1/me/").json()["username"] == "dev"
    event = AuditEvent.objects.get(action="api_token.create")
    assert value not in str(event.after) and event.after["prefix"] == token.prefix


def test_a_token_needs_a_name_and_a_scope(client, api_world):
    client.force_login(api_world.member)
    page = make(client, name="", scopes=[]).content.decode()
    assert page.count('class="error"') == 2
    assert not ApiToken.objects.exists()


def test_a_token_that_never_expires(client, api_world):
    client.force_login(api_world.member)
    make(client, expires="never")
    assert ApiToken.objects.get().expires_at is None


def test_revoking_a_token_stops_it_and_is_audited(client, api_world):
    client.force_login(api_world.member)
    value = shown_token(make(client).content.decode())
    token = ApiToken.objects.get()

    response = client.post(f"/tokens/{token.pk}/revoke/")

    assert response.status_code == 302
    assert api(token=value).get("/api/v1/me/").status_code == 401
    assert "revoked" in client.get("/tokens/").content.decode()
    assert AuditEvent.objects.filter(action="api_token.revoke", actor=api_world.member).exists()


def test_nobody_revokes_someone_elses_token(client, api_world):
    client.force_login(api_world.member)
    make(client)
    token = ApiToken.objects.get()
    client.force_login(api_world.outsider)
    assert client.post(f"/tokens/{token.pk}/revoke/").status_code == 404
    assert ApiToken.objects.get().revoked_at is None
    assert token.prefix not in client.get("/tokens/").content.decode()


def test_the_tokens_page_needs_sign_in(client, api_world):
    assert client.get("/tokens/").status_code == 302


def test_create_api_token_prints_the_token_once(api_world):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "create_api_token",
        "dev",
        "--scopes",
        "read,request",
        "--expires-days",
        "7",
        stdout=out,
        stderr=err,
    )

    value = out.getvalue().strip()
    assert value.startswith("berth_") and "\n" not in value
    assert "shown only this once" in err.getvalue()
    assert ApiToken.objects.get().scopes == ["read", "request"]
    assert api(token=value).get("/api/v1/requests/").status_code == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody"], "No user"),
        (["dev", "--scopes", "read,root"], "unknown: root"),
        (["dev", "--expires-days", "0"], "1 or more"),
    ],
)
def test_create_api_token_refuses_bad_input(api_world, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("create_api_token", *args, stdout=io.StringIO(), stderr=io.StringIO())
