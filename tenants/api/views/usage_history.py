"""/api/v1/tenants/{slug}/costs/history/ (members, platform admins): used against
allocated, month over month."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors
from tenants.api.serializers import usage_history as s
from tenants.api.views.base import ApiView, validated
from tenants.selectors.usage_history import usage_history


class UsageHistoryView(ApiView, APIView):
    def named_object_visible(self, user: Any) -> bool:
        return selectors.tenants_for_user(user).filter(slug=self.kwargs["slug"]).exists()

    @extend_schema(
        summary="Used against allocated, month over month: CPU core-hours and memory "
        "GiB-hours held, used and idle, and what the idle part cost",
        parameters=[s.HistoryQuerySerializer],
        responses=s.UsageHistorySerializer,
    )
    def get(self, request: ApiRequest, slug: str) -> Response:
        query = validated(s.HistoryQuerySerializer, request.query_params)
        tenant = selectors.visible_tenant(request.user, slug)
        history = usage_history(tenant, months=query["months"])
        return Response(s.UsageHistorySerializer({"tenant": tenant.slug, "months": history}).data)
