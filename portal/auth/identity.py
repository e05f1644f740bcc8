"""From an identity provider's verified claims to the Berth user who signs in.

People are matched by the provider's `sub` claim (User.oidc_subject) and never by e-mail:
an address can be reassigned, a subject cannot. Name and e-mail are refreshed from the
claims at each sign-in; memberships and the platform-admin flag are synced from the groups.
Nobody who signs in this way has a usable password.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from portal.auth.errors import SignInRefused
from tenants import audit
from tenants.membership_sync import sync_memberships
from tenants.models import User
from tenants.services.deploy_tokens import end_unentitled_deploy_tokens

UNSAFE_USERNAME_CHARACTERS = re.compile(r"[^\w.@+-]")
USERNAME_BASE_MAX = 140  # leaves room for a "-<n>" suffix within Django's 150


def groups_from_claims(claims: Mapping[str, Any], claim: str) -> list[str]:
    """The groups in `claim` (a name, or a dotted path such as `realm_access.roles`)."""
    value: Any = claims
    for part in claim.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence):
        return []
    return sorted({group for group in value if isinstance(group, str) and group})


def sign_in(*, claims: Mapping[str, Any], source_ip: str | None = None) -> tuple[User, list[str]]:
    """The user these verified claims describe, and the groups they hold.

    Creates the user at their first sign-in; refreshes their name and e-mail and syncs their
    memberships at every one. Raises SignInRefused without a `sub` or for a deactivated user.
    """
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject.strip():
        raise SignInRefused("subject", "the claims have no `sub`")
    groups = groups_from_claims(claims, settings.OIDC_GROUPS_CLAIM)
    with transaction.atomic():
        user = User.objects.filter(oidc_subject=subject).first()
        if user is None:
            user = _create_user(subject=subject, claims=claims, source_ip=source_ip)
        if not user.is_active:
            raise SignInRefused("inactive", f"user {user.pk} is deactivated")
        _refresh_profile(user, claims)
        synced = sync_memberships(
            user=user,
            groups=groups,
            platform_admin_groups=settings.BERTH_PLATFORM_ADMIN_GROUPS,
            source_ip=source_ip,
        )
    if synced.changes:
        # A deploy token minted with a membership lost or narrowed ends with it, now.
        end_unentitled_deploy_tokens(minted_by=user)
    return user, groups


def username_for(claims: Mapping[str, Any]) -> str:
    """A free username from `preferred_username` (or the e-mail's local part), made unique."""
    wanted = str(claims.get("preferred_username") or "").strip()
    if not wanted:
        wanted = str(claims.get("email") or "").partition("@")[0]
    base = UNSAFE_USERNAME_CHARACTERS.sub("-", wanted).strip("-.")[:USERNAME_BASE_MAX] or "user"
    candidate, n = base, 1
    while User.objects.filter(username__iexact=candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _create_user(*, subject: str, claims: Mapping[str, Any], source_ip: str | None) -> User:
    for _ in range(5):  # another sign-in may take the same username (or subject) meanwhile
        try:
            with transaction.atomic():
                user = User(username=username_for(claims), oidc_subject=subject)
                user.set_unusable_password()
                user.save()
        except IntegrityError:
            existing = User.objects.filter(oidc_subject=subject).first()
            if existing is not None:
                return existing
            continue
        audit.record(
            actor=user,
            action="user.create",
            obj=user,
            after={"username": user.username, "oidc_subject": subject},
            source_ip=source_ip,
        )
        return user
    raise SignInRefused("unknown", "could not find a free username")


def _refresh_profile(user: User, claims: Mapping[str, Any]) -> None:
    wanted: dict[str, str] = {}
    if "email" in claims:
        wanted["email"] = str(claims["email"] or "")[:254]
    if "given_name" in claims or "family_name" in claims:
        wanted["first_name"] = str(claims.get("given_name") or "")[:150]
        wanted["last_name"] = str(claims.get("family_name") or "")[:150]
    elif "name" in claims:
        wanted["first_name"], wanted["last_name"] = str(claims["name"] or "")[:150], ""
    changed = [name for name, value in wanted.items() if getattr(user, name) != value]
    for name in changed:
        setattr(user, name, wanted[name])
    # Only the break-glass superuser may keep a password; everyone else signs in at the provider.
    if user.has_usable_password() and not user.is_superuser:
        user.set_unusable_password()
        changed.append("password")
    if changed:
        user.save(update_fields=changed)
