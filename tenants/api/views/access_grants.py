"""/api/v1/access-grants/: ask for one of a tier's roles on a namespace for a while, read
the grants you may see, and end one early."""

from __future__ import annotations

from typing import Any

import django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.reverse import reverse

from tenants import selectors, services
from tenants.api.serializers.access_grants import (
    AccessGrantCreateSerializer,
    AccessGrantSerializer,
)
from tenants.api.views.base import ID, ApiView, validated
from tenants.client_address import client_ip
from tenants.models import AccessGrant
from tenants.models.tokens import TokenScope
from tenants.selectors.access_grants import STATES, filter_by_state


class AccessGrantFilterSet(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(
        choices=[(state, state) for state in STATES],
        method="by_state",
        label="Only grants in this state",
    )
    namespace = django_filters.CharFilter(
        field_name="namespace__name", label="Only grants on this namespace (its name)"
    )
    mine = django_filters.BooleanFilter(method="only_mine", label="true: only your own grants")

    class Meta:
        model = AccessGrant
        fields = ["state", "namespace", "mine"]

    def by_state(self, queryset: Any, _name: str, value: str) -> Any:
        return filter_by_state(queryset, value)

    def only_mine(self, queryset: Any, _name: str, value: bool | None) -> Any:
        if not value or self.request is None:
            return queryset
        return queryset.filter(person=self.request.user)


@extend_schema_view(
    list=extend_schema(
        summary="Access grants you may see: your own, those on your tenants' namespaces "
        "(all for platform admins), newest first"
    ),
    retrieve=extend_schema(summary="One access grant"),
)
class AccessGrantViewSet(
    ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    serializer_class = AccessGrantSerializer
    filterset_class = AccessGrantFilterSet
    ordering_fields = ["created_at", "expires_at", "id"]
    ordering = ["-created_at", "-id"]
    lookup_value_regex = ID
    # Asking for access and ending it are what a token asks requests with.
    scopes = {"create": TokenScope.REQUEST, "revoke": TokenScope.REQUEST}

    queryset = AccessGrant.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.grants_visible_to(user)

    def get_object(self) -> AccessGrant:
        return selectors.visible_grant(self.request.user, int(self.kwargs["pk"]))

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "user": self.request.user}

    def _show(
        self, pk: int, status_code: int = status.HTTP_200_OK, headers: dict[str, str] | None = None
    ) -> Response:
        grant = selectors.visible_grant(self.request.user, pk)
        return Response(self.get_serializer(grant).data, status=status_code, headers=headers)

    @extend_schema(
        summary="Ask for one of a tier's roles on a live namespace (your tenant's or "
        "another's) for a while; its tenant's approval rules decide, nobody approves "
        "their own",
        request=AccessGrantCreateSerializer,
        responses={201: AccessGrantSerializer},
    )
    def create(self, request: ApiRequest) -> Response:
        asked = validated(AccessGrantCreateSerializer, request.data)
        grant = services.request_access(
            person=request.user,
            namespace=asked["namespace"],
            role=asked["role"],
            duration=asked["duration"],
            reason=asked["reason"],
            cluster=asked.get("cluster", ""),
            source_ip=client_ip(request),
        )
        location = reverse("api:access-grant-detail", kwargs={"pk": grant.pk})
        return self._show(grant.pk, status.HTTP_201_CREATED, {"Location": location})

    @extend_schema(
        summary="End a grant before its time (its holder, an owner of its tenant, a platform "
        "admin): the binding goes at once",
        request=None,
        responses=AccessGrantSerializer,
    )
    @action(detail=True, methods=["post"])
    def revoke(self, request: ApiRequest, pk: str) -> Response:
        grant = self.get_object()
        services.revoke_grant(grant_id=grant.pk, actor=request.user, source_ip=client_ip(request))
        return self._show(grant.pk)
