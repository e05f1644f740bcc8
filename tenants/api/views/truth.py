"""/api/v1/tenants/{slug}/truth/: the tenant's truth table; refresh; repair (admins)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import Throttled
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import provisioner, selectors, services
from tenants.api.serializers import truth as s
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.models.tokens import TokenScope


class _TenantView(ApiView, APIView):
    def named_object_visible(self, user: Any) -> bool:
        return selectors.tenants_for_user(user).filter(slug=self.kwargs["slug"]).exists()

    def _table(self, request: ApiRequest, slug: str) -> Response:
        query = validated(s.TruthQuerySerializer, request.query_params)
        view = selectors.truth_table(request.user, slug, **query)
        return Response(s.TruthTableSerializer(view).data)


class TruthTableView(_TenantView):
    @extend_schema(
        summary="The tenant's last truth table: database, repository and cluster, object by object",
        parameters=[s.TruthQuerySerializer],
        responses=s.TruthTableSerializer,
    )
    def get(self, request: ApiRequest, slug: str) -> Response:
        return self._table(request, slug)


class TruthRefreshView(_TenantView):
    scopes = {"*": TokenScope.REQUEST}

    @extend_schema(
        summary="Compare now and answer the new table (at most every "
        "BERTH_TRUTH_REFRESH_SECONDS: 429 with Retry-After before)",
        request=None,
        parameters=[s.TruthQuerySerializer],
        responses=s.TruthTableSerializer,
    )
    def post(self, request: ApiRequest, slug: str) -> Response:
        tenant = selectors.visible_tenant(request.user, slug)
        wait = selectors.refresh_wait(tenant)
        if wait:
            raise Throttled(
                wait=wait, detail=f"The table was taken moments ago; refresh again in {wait} s."
            )
        provisioner.take_truth(tenant)
        return self._table(request, slug)


class TruthRepairView(_TenantView):
    scopes = {"*": TokenScope.ADMIN}

    @extend_schema(
        summary="Repair (platform admins): a tenant_sync request per cluster",
        request=None,
        responses={202: s.RepairSerializer},
    )
    def post(self, request: ApiRequest, slug: str) -> Response:
        made = services.repair_truth(
            tenant=selectors.visible_tenant(request.user, slug),
            actor=request.user,
            source_ip=client_ip(request),
        )
        return Response({"requests": [r.pk for r in made]}, status=status.HTTP_202_ACCEPTED)
