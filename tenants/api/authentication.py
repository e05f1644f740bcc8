"""Who is calling the API.

- `ApiTokenAuthentication`: `Authorization: Bearer berth_…`, a personal API token made on
  the API tokens page or with `manage.py create_api_token`. Looked up by its SHA-256; an
  unknown, revoked or expired token is refused (401). `request.auth` is the token, whose
  scopes limit what it may do (tenants.api.permissions).
- `OIDCAccessTokenAuthentication`: `Authorization: Bearer <JWT>`, an access token from the
  configured OpenID Connect provider for machine clients. The signature is checked against
  the provider's JWKS (the same discovery and key cache as sign-in), and so are `iss`,
  `aud` (OIDC_API_AUDIENCE, by default Berth's client id) and `exp`. The `sub` claim must
  name a user who has signed in to Berth before: an access token never creates a user, and
  its groups claim is not synced here: memberships follow interactive sign-ins only.
- The browser's session (DRF's SessionAuthentication, which enforces CSRF).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import requests
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from portal.auth import discovery
from portal.auth.backends import OIDCBackend
from portal.auth.errors import REASONS, SignInRefused
from tenants.models import ApiToken, User
from tenants.models.tokens import TOKEN_PREFIX, token_digest

logger = logging.getLogger(__name__)

REALM = 'Bearer realm="berth"'
# last_used_at is written at most this often per token: reads stay reads.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class ProviderUnavailable(exceptions.APIException):
    status_code = 503
    default_detail = "The identity provider could not be reached to check the access token."
    default_code = "provider_unavailable"


def bearer_value(request: Request) -> str | None:
    """The credential of an `Authorization: Bearer …` header, None without one."""
    header = get_authorization_header(request).split()
    if not header or header[0].lower() != b"bearer":
        return None
    if len(header) != 2:
        raise exceptions.AuthenticationFailed(
            "Malformed Authorization header: expected 'Bearer <token>'."
        )
    try:
        return header[1].decode("ascii")
    except UnicodeDecodeError as exc:
        raise exceptions.AuthenticationFailed("The bearer token is not ASCII.") from exc


def looks_like_jwt(value: str) -> bool:
    return value.count(".") == 2 and not value.startswith(TOKEN_PREFIX)


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        value = bearer_value(request)
        if value is None or looks_like_jwt(value):
            return None  # no bearer token, or an OIDC access token
        token = (
            ApiToken.objects.select_related("user").filter(digest=token_digest(value)).first()
            if value.startswith(TOKEN_PREFIX)
            else None
        )
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown API token.", code="token_unknown")
        now = timezone.now()
        if token.is_revoked:
            raise exceptions.AuthenticationFailed(
                "This API token was revoked.", code="token_revoked"
            )
        if token.is_expired(now):
            raise exceptions.AuthenticationFailed(
                "This API token has expired.", code="token_expired"
            )
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(
                "The token's user is deactivated.", code="user_inactive"
            )
        self._record_use(token, now)
        return token.user, token

    @staticmethod
    def _record_use(token: ApiToken, now: Any) -> None:
        stale = now - LAST_USED_RESOLUTION
        if token.last_used_at is not None and token.last_used_at > stale:
            return
        ApiToken.objects.filter(pk=token.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=stale)
        ).update(last_used_at=now)
        token.last_used_at = now

    def authenticate_header(self, request: Request) -> str:
        return REALM


@dataclass(frozen=True)
class AccessToken:
    """`request.auth` of a caller with an OIDC access token: its verified claims."""

    claims: dict[str, Any]


class _AccessTokenVerifier(OIDCBackend):
    """Sign-in's discovery and JWKS cache, checking an API access token instead of an ID token."""

    def decode(self, token: str) -> dict[str, Any]:
        return self.decode_signed(
            token, self.retrieve_matching_jwk(token), audience=settings.OIDC_API_AUDIENCE,
            required=["iss", "aud", "exp", "sub"], kind="access token",
            wrong_audience="is not for Berth's API",
        )


class OIDCAccessTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, AccessToken] | None:
        value = bearer_value(request)
        if value is None or not looks_like_jwt(value):
            return None
        if not discovery.is_configured() or not settings.OIDC_API_AUDIENCE:
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
