"""/api/v1/me/: who is calling, with which credential and scopes; and their own settings."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services
from tenants.api import serializers as s
from tenants.api.authentication import AccessToken
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.models import ApiToken
from tenants.models.tokens import TokenScope


class MeView(ApiView, APIView):
    # Changing one's own settings is no admin's business: the scope that submits requests.
    scopes = {"*": TokenScope.REQUEST}

    @extend_schema(
        summary="Who the credential acts as, and what it may do", responses=s.MeSerializer
    )
    def get(self, request: ApiRequest) -> Response:
        return self._me(request)

    @extend_schema(
        summary="Change your own settings: the notification events you are not e-mailed about",
        request=s.MeUpdateSerializer,
        responses=s.MeSerializer,
    )
    def patch(self, request: ApiRequest) -> Response:
        data = validated(s.MeUpdateSerializer, request.data)
        if "muted_notifications" in data:
            services.set_muted_notifications(
                user=request.user,
                muted=data["muted_notifications"],
                source_ip=client_ip(request),
            )
        return self._me(request)

    def _me(self, request: ApiRequest) -> Response:
        user, auth = request.user, request.auth
        if isinstance(auth, ApiToken):
            kind, scopes, token = "api_token", list(auth.scopes), s.token_summary(auth)
        else:
            kind = "oidc_access_token" if isinstance(auth, AccessToken) else "session"
            scopes, token = list(TokenScope.values), None
        memberships = [
            {"tenant": slug, "role": role}
            for slug, role in user.memberships.values_list("tenant__slug", "role")
        ]
        return Response(
            s.MeSerializer(
                {
                    "username": user.username,
                    "display_name": user.display_name,
                    "is_platform_admin": selectors.is_platform_admin(user),
                    "memberships": memberships,
                    "authentication": kind,
                    "scopes": scopes,
                    "token": token,
                    "muted_notifications": list(user.muted_notifications or []),
                }
            ).data
        )
