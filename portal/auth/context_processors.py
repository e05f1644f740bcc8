"""What templates may show about how the user signed in. Both values are evaluated lazily."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest

from portal.auth.backends import SESSION_GROUPS_KEY


def identity(request: HttpRequest) -> dict[str, Callable[[], Any]]:
    def signin_groups() -> list[str] | None:
        """The groups the provider sent at this session's sign-in; None for break-glass."""
        session = getattr(request, "session", None)
        return session.get(SESSION_GROUPS_KEY) if session is not None else None

    def tenant_groups() -> list[Any]:
        """Each tenant with the groups that grant its roles: what to ask to be added to."""
        from tenants.models import Tenant

        return list(
            Tenant.objects.only("slug", "name", "owner_groups", "member_groups", "viewer_groups")
        )

    return {"signin_groups": signin_groups, "tenant_groups": tenant_groups}
