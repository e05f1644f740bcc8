"""What the development provider says about a person: standard claims, and their groups."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from oidc_provider.lib.claims import ScopeClaims


def subject(user: Any) -> str:
    """The `sub` claim: stable per account (tenants.demo_people.DemoPerson.subject matches it)."""
    return f"devidp-{user.username}"


def userinfo(claims: dict[str, Any], user: Any) -> dict[str, Any]:
    claims.update(
        name=user.get_full_name(),
        given_name=user.first_name,
        family_name=user.last_name,
        preferred_username=user.username,
        email=user.email,
        email_verified=True,
    )
    return claims


class GroupsScopeClaims(ScopeClaims):
    """The `groups` scope: a `groups` claim in the ID token and at the userinfo endpoint."""

    info_groups = (_("Groups"), _("The groups you belong to; they decide your tenants in Berth."))

    def scope_groups(self) -> dict[str, list[str]]:
        return {"groups": sorted(self.user.groups.values_list("name", flat=True))}
