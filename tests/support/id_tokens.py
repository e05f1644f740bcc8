"""Signed tokens from a real provider process, got as Berth's client gets them: the code flow
with PKCE, for CLIENT_ID with its secret.

- `id_token_of(issuer, username)`: the development provider's (`running_dev_idp`) ID token
  for one of the demo people, signed in at its form (the password is the username twice).
- `signed_in_tokens(...)`: the same sign-in's whole answer, ID token and access token.
- `tokens_from(provider, claims, ...)`: the test provider's (`running_test_provider`) answer
  for whoever the test says signs in next, with the defect it asks for.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests

from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET, TestProvider

# Where Berth would be for a provider started with `berth_url=UNCALLED_BERTH_URL`: only named
# in redirect URIs, never called.
UNCALLED_BERTH_URL = "http://127.0.0.1:9"


def code_flow_tokens(
    issuer: str,
    *,
    redirect_uri: str,
    scope: str,
    session: requests.Session | None = None,
    client_id: str = CLIENT_ID,
    client_secret: str | None = CLIENT_SECRET,
) -> dict[str, Any]:
    """What the provider at `issuer` answers a client (Berth's, unless told) for one
    authorization code: the authorize request (with PKCE) in `session` (a signed-in browser,
    or none), then the token request; a public client (`client_secret=None`) sends none."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    authorized = (session or requests).get(
        f"{issuer}/authorize",
        params={
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": scope,
            "state": "s",
            "nonce": "n",
            "code_challenge": challenge.rstrip(b"=").decode(),
            "code_challenge_method": "S256",
        },
        allow_redirects=False,
        timeout=10,
    )
    if "Location" not in authorized.headers and 'name="allow"' in authorized.text:
        authorized = consent(issuer, authorized.text, session)
    code = parse_qs(urlsplit(authorized.headers["Location"]).query)["code"][0]
    tokens = requests.post(
        f"{issuer}/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            **({"client_secret": client_secret} if client_secret is not None else {}),
        },
        timeout=10,
    )
    return tokens.json()


def consent(issuer: str, page: str, session: requests.Session | None) -> requests.Response:
    """The person clicks "Authorize" on the provider's consent page (a public client's
    sign-in always asks: anyone may claim to be a public client)."""
    fields = dict(re.findall(r'<input name="([^"]+)" type="hidden" value="([^"]*)"', page))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    return (session or requests).post(
        f"{issuer}/authorize",
        data={
            **{name: html.unescape(value) for name, value in fields.items()},
            "csrfmiddlewaretoken": token.group(1) if token else "",
            "allow": "Authorize",
        },
        headers={"Referer": f"{issuer}/authorize"},
        allow_redirects=False,
        timeout=10,
    )


def signed_in_tokens(
    issuer: str, username: str, *, berth_url: str = UNCALLED_BERTH_URL, **client: Any
) -> dict[str, Any]:
    """The development provider's tokens for `username`, signed in at its form first, for a
    Berth at `berth_url` (the one the provider was started for), or for the client and
    redirect URI `client` names (code_flow_tokens' arguments)."""
    session = signed_in_session(issuer, username)
    return code_flow_tokens(
        issuer,
        **{"redirect_uri": f"{berth_url}/oidc/callback/", "scope": "openid groups", **client},
        session=session,
    )


def id_token_of(issuer: str, username: str) -> str:
    """An ID token for Berth's client, as a person's sign-in gets it (code flow with PKCE)."""
    return signed_in_tokens(issuer, username)["id_token"]


def tokens_from(provider: TestProvider, claims: dict, defect: str | None = None, **login) -> dict:
    """What the provider answers a real code exchange: an ID token and an access token."""
    provider.next_login(claims, defect, **login)
    return code_flow_tokens(
        provider.url, redirect_uri="http://testserver/oidc/callback/", scope="openid"
    )


def signed_in_session(issuer: str, username: str) -> requests.Session:
    """A browser signed in at the development provider's form as `username`."""
    provider = issuer.removesuffix("/openid")
    session = requests.Session()
    login = session.get(f"{provider}/login/", timeout=10)
    session.post(
        f"{provider}/login/",
        data={
            "username": username,
            "password": username * 2,
            "next": "/",
            "csrfmiddlewaretoken": session.cookies["devidp_csrftoken"],
        },
        headers={"Referer": login.url},
        timeout=10,
    )
    return session


def follow_sign_in(issuer: str, address: str, username: str) -> requests.Response:
    """What a person does with the sign-in address a native app printed: open it, sign in
    as `username`, consent, and let the browser follow the provider's redirect to the app's
    loopback listener. The listener's page is returned."""
    session = signed_in_session(issuer, username)
    authorized = session.get(address, allow_redirects=False, timeout=10)
    if "Location" not in authorized.headers and 'name="allow"' in authorized.text:
        authorized = consent(issuer, authorized.text, session)
    return session.get(authorized.headers["Location"], timeout=10)
