"""Personal API tokens: made with a value shown once, revoked at once."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import User
from tenants.models.tokens import (
    DISPLAY_PREFIX_LENGTH,
    TOKEN_PREFIX,
    ApiToken,
    TokenScope,
    token_digest,
)


def create_api_token(
    *,
    user: User,
    name: str,
    scopes: list[str],
    expires_at: Any = None,
    source_ip: str | None = None,
) -> tuple[ApiToken, str]:
    """Make a token for `user`; returns it and its value, which is never stored or shown again."""
    errors: dict[str, list[str]] = {}
    if not name.strip():
        errors["name"] = ["Give the token a name that says what it is for."]
    unknown = sorted(set(scopes) - set(TokenScope.values))
    if unknown or not scopes:
        errors["scopes"] = [
            f"Choose one or more of {', '.join(TokenScope.values)}"
            + (f"; unknown: {', '.join(unknown)}." if unknown else ".")
        ]
    if expires_at is not None and expires_at <= timezone.now():
        errors["expires_at"] = ["The expiry must be in the future."]
    if errors:
        raise InvalidInput.of(errors)
    value = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ordered = [scope for scope in TokenScope.values if scope in scopes]
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name.strip(),
            prefix=value[:DISPLAY_PREFIX_LENGTH],
            digest=token_digest(value),
            scopes=ordered,
            expires_at=expires_at,
        )
        audit.record(
            actor=user,
            action="api_token.create",
            obj=token,
            source_ip=source_ip,
            after={
                "name": token.name,
                "prefix": token.prefix,
                "scopes": ordered,
                "expires_at": expires_at.isoformat() if expires_at else None,
            },
        )
    return token, value


def revoke_api_token(*, actor: User, token: ApiToken, source_ip: str | None = None) -> ApiToken:
    """Revoke one of the actor's own tokens; it stops working at once. Revoking twice is a no-op."""
    if token.user_id != actor.pk:
        raise NotAllowed("You may revoke only your own tokens.")
    with transaction.atomic():
        locked = ApiToken.objects.select_for_update().get(pk=token.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
            audit.record(
                actor=actor,
                action="api_token.revoke",
                obj=locked,
                source_ip=source_ip,
                after={"name": locked.name, "prefix": locked.prefix},
            )
    return locked
