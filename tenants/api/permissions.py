"""What a caller may do, beyond what the services and selectors already refuse.

An API token acts only within its scopes: `read` for GET, `request` to submit, cancel and
comment, `approve` to approve, reject and retry, `admin` for platform admins' writes
(tenants, clusters). Sessions and OIDC access tokens carry every scope: their rights come
from the user's roles alone, as in the browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from tenants import selectors
from tenants.models import ApiToken
from tenants.models.tokens import TokenScope

if TYPE_CHECKING:
    from rest_framework.views import APIView


def required_scope(request: Request, view: APIView) -> str:
    """The scope the view's action needs: `scopes` on the view, else read for safe methods."""
    action = getattr(view, "action", None)
    scopes: dict[str, str] = getattr(view, "scopes", {})
    if action in scopes:
        return scopes[action]
    if request.method in SAFE_METHODS:
        return TokenScope.READ
    return scopes.get("*", TokenScope.ADMIN)


class TokenHasScope(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        scope = required_scope(request, view)
        if token.has_scope(scope):
            return True
        self.message = (
            f"This API token lacks the '{scope}' scope (it has: {', '.join(token.scopes)}). "
            "Make a token with that scope on the API tokens page."
        )
        return False


class IsPlatformAdmin(BasePermission):
    message = "Only platform admins may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return selectors.is_platform_admin(request.user)


class IsPlatformAdminOrReadOnly(IsPlatformAdmin):
    message = "Only platform admins may change this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or super().has_permission(request, view)


class MaySeeAudit(BasePermission):
    message = "The audit log is for platform admins and tenant owners."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return selectors.may_see_audit(request.user)
