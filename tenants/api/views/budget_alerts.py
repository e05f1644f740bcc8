"""/api/v1/tenants/{slug}/budget-alerts/: the tenant's monthly cost alert, the month's cost
as a share of it and this month's alerts (members); setting the threshold (owners, platform
admins)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services
from tenants.api.serializers import budget_alerts as s
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.models import Tenant
from tenants.models.tokens import TokenScope
from tenants.selectors.budget_alerts import budget_alerts_panel


class BudgetAlertsView(ApiView, APIView):
    scopes = {"*": TokenScope.REQUEST}  # writes: owners watch their own spending

    def named_object_visible(self, user: Any) -> bool:
        return selectors.tenants_for_user(user).filter(slug=self.kwargs["slug"]).exists()

    def _panel(self, tenant: Tenant) -> Response:
        return Response(
            s.BudgetAlertsSerializer(budget_alerts_panel(self.request.user, tenant)).data
        )

    @extend_schema(
        summary="The tenant's monthly cost alert, the month's cost as a share of it, and "
        "this month's budget alerts",
        responses=s.BudgetAlertsSerializer,
    )
    def get(self, request: ApiRequest, slug: str) -> Response:
        return self._panel(selectors.visible_tenant(request.user, slug))

    @extend_schema(
        summary="Set the tenant's monthly cost alert (owners, platform admins); null clears it",
        request=s.CostAlertSerializer,
        responses=s.BudgetAlertsSerializer,
    )
    def put(self, request: ApiRequest, slug: str) -> Response:
        tenant = selectors.visible_tenant(request.user, slug)
        data = validated(s.CostAlertSerializer, request.data)
        services.set_cost_alert(
            actor=request.user,
            tenant=tenant,
            amount=data["monthly_cost_alert"],
            source_ip=client_ip(request),
        )
        return self._panel(tenant)
