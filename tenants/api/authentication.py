"""Who is calling the API.

- `ApiTokenAuthentication`: `Authorization: Bearer berth_…`, a personal API token made on
  the API tokens page or with `manage.py create_api_token`. Looked up by its SHA-256; an
  unknown, revoked or expired token is refused (401). `request.auth` is the token, whose
  scopes limit what it may do (tenants.api.permissions).
- `portal.auth.api.OIDCAccessTokenAuthentication`: `Authorization: Bearer <JWT>`, an access
  token from the OpenID Connect provider (it lives with sign-in, whose keys it checks); its
  `request.auth` is an `AccessToken` (below).
- The browser's session (DRF's SessionAuthentication, which enforces CSRF).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from tenants.models import ApiToken, User
from tenants.models.tokens import TOKEN_PREFIX, token_digest

REALM = 'Bearer realm="berth"'
# last_used_at is written at most this often per token: reads stay reads.
LAST_USED_RESOLUTION = timedelta(minutes=1)


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
        token = self._token(value)
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
    def _token(value: str) -> ApiToken:
        # get(), not first(): the digest is unique, and ordering the lookup costs time.
        if value.startswith(TOKEN_PREFIX):
            try:
                return ApiToken.objects.select_related("user").get(digest=token_digest(value))
            except ApiToken.DoesNotExist:
                pass
        raise exceptions.AuthenticationFailed("Unknown API token.", code="token_unknown")

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
