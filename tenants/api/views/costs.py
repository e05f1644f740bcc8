"""/api/v1/tenants/{slug}/costs/ (members, platform admins) and
/api/v1/clusters/{name}/prices/ (platform admins): showback."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services, usage
from tenants.api.permissions import IsPlatformAdmin
from tenants.api.serializers import costs as s
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.errors import InvalidInput
from tenants.models import Cluster, ClusterPrice, Tenant
from tenants.models.tokens import TokenScope
from tenants.selectors.charges import parse_month
from tenants.selectors.cost_window import costs_over
from tenants.selectors.costs import tenant_costs


class TenantCostsView(ApiView, APIView):
    def named_object_visible(self, user: Any) -> bool:
        return selectors.tenants_for_user(user).filter(slug=self.kwargs["slug"]).exists()

    @extend_schema(
        summary="What the tenant's allocated quota costs in a month, per "
        "namespace, project, tier and day",
        parameters=[s.CostsQuerySerializer],
        responses=s.CostsSerializer,
    )
    def get(self, request: ApiRequest, slug: str) -> Response:
        query = validated(s.CostsQuerySerializer, request.query_params)
        tenant = selectors.visible_tenant(request.user, slug)
        costs = tenant_costs(tenant, month=parse_month(query.get("month")))
        measured = usage.measured_for(
            [row.name for row in costs.namespaces if row.ended_at is None]
        )
        return Response(s.CostsSerializer(costs, context={"measured": measured}).data)


class ClusterPricesView(ApiView, APIView):
    permission_classes = [*ApiView.permission_classes, IsPlatformAdmin]
    scopes = {"*": TokenScope.ADMIN}

    def named_object_visible(self, user: Any) -> bool:
        return (
            selectors.is_platform_admin(user)
            and Cluster.objects.filter(name=self.kwargs["name"]).exists()
        )

    def _show(self, cluster: Cluster) -> Response:
        price = services.prices_in_force(cluster) or ClusterPrice(cluster=cluster)
        upcoming = ClusterPrice.objects.filter(
            cluster=cluster, effective_from__gt=timezone.now()
        ).order_by("effective_from")
        price.upcoming = list(upcoming)
        return Response(s.PricesAnswerSerializer(price).data)

    @extend_schema(
        summary="The cluster's prices (platform admins)", responses=s.PricesAnswerSerializer
    )
    def get(self, request: ApiRequest, name: str) -> Response:
        return self._show(Cluster.objects.get(name=name))

    @extend_schema(
        summary="Set the cluster's prices from now or a later date (platform admins); "
        "those left out stay as they stand then",
        request=s.PricesSerializer,
        responses=s.PricesAnswerSerializer,
    )
    def put(self, request: ApiRequest, name: str) -> Response:
        cluster = Cluster.objects.get(name=name)
        data = dict(validated(s.PricesSerializer, request.data))
        effective_from = data.pop("effective_from", None)
        services.set_cluster_prices(
            actor=request.user,
            cluster=cluster,
            values=data,
            effective_from=effective_from,
            source_ip=client_ip(request),
        )
        return self._show(cluster)


class AdjustmentsView(ApiView, APIView):
    permission_classes = [*ApiView.permission_classes, IsPlatformAdmin]
    scopes = {"*": TokenScope.ADMIN}

    @extend_schema(
        summary="Correct a closed month of a tenant with a dated adjustment (platform admins)",
        request=s.AdjustmentInputSerializer,
        responses={201: s.AdjustmentAnswerSerializer},
    )
    def post(self, request: ApiRequest) -> Response:
        data = validated(s.AdjustmentInputSerializer, request.data)
        tenant = Tenant.objects.filter(slug=data["tenant"]).first()
        if tenant is None:
            raise InvalidInput.of({"tenant": [f"No tenant is called {data['tenant']}."]})
        row = services.add_adjustment(
            actor=request.user,
            tenant=tenant,
            month=data["month"],
            amount=data["amount"],
            note=data["note"],
            namespace=data.get("namespace", ""),
            currency=data.get("currency", ""),
            source_ip=client_ip(request),
        )
        return Response(s.AdjustmentAnswerSerializer(row).data, status=201)


class WindowCostsView(ApiView, APIView):
    @extend_schema(
        summary="What was held over any window cost, per namespace, project, tier, tenant or "
        "cluster (your tenants; platform admins: every tenant)",
        parameters=[s.WindowQuerySerializer],
        responses=s.WindowCostsSerializer,
    )
    def get(self, request: ApiRequest) -> Response:
        query = validated(s.WindowQuerySerializer, request.query_params.dict())
        if "tenant" in query:
            tenants = [selectors.visible_tenant(request.user, query["tenant"])]
        elif selectors.is_platform_admin(request.user):
            tenants = None
        else:
            tenants = list(selectors.tenants_for_user(request.user))
        end = min(query["end"], timezone.now())  # nothing is known of later yet
        found = costs_over(query["start"], end, by=query["by"], tenants=tenants)
        return Response(
            s.WindowCostsSerializer(
                {"start": query["start"], "end": end, "by": query["by"], "costs": found}
            ).data
        )
