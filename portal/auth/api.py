"""The REST API's OpenID Connect bearer tokens: `Authorization: Bearer <JWT>`, an access token
from the configured provider for machine clients (docs/api.md).

Only access tokens: an ID token any browser sign-in ever received is not an API credential.
A token typed as an access token (RFC 9068 `typ: at+jwt`) must name OIDC_API_AUDIENCE, or
Berth's client id while that is unset; any other token must name OIDC_API_AUDIENCE, an
audience of Berth's API that is not its client id, so a token meant only for Berth's client
(an ID token) is refused unless the operator opts in (OIDC_API_ACCEPT_CLIENT_AUDIENCE=1 for
a provider that cannot mint another audience). A token that says it is an ID token (a
`nonce`, an `at_hash`, Keycloak's `typ: ID`) is refused whatever its audience.

The signature is checked against the provider's JWKS (the same discovery and key cache as
sign-in), and so are `iss` and `exp`. The `sub` claim must name a user who has signed in to
Berth before: an access token never creates a user, and its groups claim is not synced here:
memberships follow interactive sign-ins only. Berth's own API tokens are
tenants.api.authentication's.
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from portal.auth import discovery
from portal.auth.backends import OIDCBackend
from portal.auth.errors import REASONS, SignInRefused
from tenants.api.authentication import REALM, AccessToken, bearer_value, looks_like_jwt
from tenants.models import User

logger = logging.getLogger(__name__)


class ProviderUnavailable(exceptions.APIException):
    status_code = 503
    default_detail = "The identity provider could not be reached to check the access token."
    default_code = "provider_unavailable"


ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt"})
# Claims only ID tokens carry (OpenID Connect Core 3.1.3.6, 3.3.2.11; Keycloak's `typ`).
ID_TOKEN_MARKS = ("nonce", "at_hash", "c_hash")


def api_audience(*, typed_access_token: bool) -> str:
    """The audience an access token must name: OIDC_API_AUDIENCE; for a token typed as an
    access token, Berth's client id while that is unset; else none is accepted."""
    return settings.OIDC_API_AUDIENCE or (settings.OIDC_RP_CLIENT_ID if typed_access_token else "")


class _AccessTokenVerifier(OIDCBackend):
    """Sign-in's discovery and JWKS cache, checking an API access token instead of an ID token."""

    def decode(self, token: str) -> dict[str, Any]:
        typed = str(self._header(token).get("typ", "")).lower() in ACCESS_TOKEN_TYPES
        audience = api_audience(typed_access_token=typed)
        if not audience:
            raise SignInRefused(
                "token",
                (
                    "it is not typed as an access token (at+jwt) and OIDC_API_AUDIENCE is not "
                    "set, so nothing tells it from an ID token"
                ),
            )
        claims = self.decode_signed(
            token,
            self.retrieve_matching_jwk(token),
            audience=audience,
            required=["iss", "aud", "exp", "sub"],
            kind="access token",
            wrong_audience="is not for Berth's API",
        )
        marks = [name for name in ID_TOKEN_MARKS if name in claims]
        if claims.get("typ") == "ID" or marks:
            raise SignInRefused("token", "it is an ID token, not an access token")
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        only_client = set(audiences) <= {settings.OIDC_RP_CLIENT_ID}
        if not typed and only_client and not settings.OIDC_API_ACCEPT_CLIENT_AUDIENCE:
            raise SignInRefused(
                "token",
                (
                    "its only audience is Berth's client id, like an ID token's: access tokens "
                    "for the API name OIDC_API_AUDIENCE"
                ),
            )
        return claims


class OIDCAccessTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, AccessToken] | None:
        value = bearer_value(request)
        if value is None or not looks_like_jwt(value):
            return None
        if not discovery.is_configured():
            raise exceptions.AuthenticationFailed(
                "Access tokens are not accepted: single sign-on is not configured. "
                "Use a Berth API token.",
                code="oidc_not_configured",
            )
        try:
            claims = _AccessTokenVerifier().decode(value)
        except SignInRefused as exc:
            if exc.code == "unreachable":
                raise ProviderUnavailable() from exc
            raise exceptions.AuthenticationFailed(
                f"The access token was refused: {exc.detail or REASONS[exc.code]}",
                code="token_invalid",
            ) from exc
        except (requests.RequestException, ValueError, TypeError, KeyError) as exc:
            logger.warning("could not check an access token: %s", type(exc).__name__)
            raise ProviderUnavailable() from exc
        subject = claims.get("sub")
        user = (
            User.objects.filter(oidc_subject=subject).first()
            if isinstance(subject, str) and subject
            else None
        )
        if user is None or not user.is_active:
            raise exceptions.AuthenticationFailed(
                "No active Berth user has this identity: sign in to Berth in a browser once "
                "(access tokens never create users).",
                code="user_unknown",
            )
        return user, AccessToken(claims=claims)

    def authenticate_header(self, request: Request) -> str:
        return REALM


class OIDCAccessTokenScheme(OpenApiAuthenticationExtension):
    target_class = "portal.auth.api.OIDCAccessTokenAuthentication"
    name = "oidcAccessToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An access token (never an ID token) from Berth's OpenID Connect "
            "provider, for a user who has signed in to Berth before: typed at+jwt, or naming "
            "the audience OIDC_API_AUDIENCE.",
        }
