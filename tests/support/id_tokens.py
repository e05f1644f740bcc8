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
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests

from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET, TestProvider

# Where Berth would be for a provider started with `berth_url=UNCALLED_BERTH_URL`: only named
# in redirect URIs, never called.
UNCALLED_BERTH_URL = "http://127.0.0.1:9"


def code_flow_tokens(
    issuer: str, *, redirect_uri: str, scope: str, session: requests.Session | None = None
) -> dict[str, Any]:
    """What the provider at `issuer` answers Berth's client for one authorization code: the
    authorize request (with PKCE) in `session` (a signed-in browser, or none), then the token
    request."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    authorized = (session or requests).get(
        f"{issuer}/authorize",
        params={
            "client_id": CLIENT_ID,
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
    code = parse_qs(urlsplit(authorized.headers["Location"]).query)["code"][0]
    tokens = requests.post(
        f"{issuer}/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "code_verifier": verifier,
        },
        timeout=10,
    )
    return tokens.json()


def signed_in_tokens(
    issuer: str, username: str, *, berth_url: str = UNCALLED_BERTH_URL
) -> dict[str, Any]:
    """The development provider's tokens for `username`, signed in at its form first, for a
    Berth at `berth_url` (the one the provider was started for)."""
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
    return code_flow_tokens(
        issuer,
        redirect_uri=f"{berth_url}/oidc/callback/",
        scope="openid groups",
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
