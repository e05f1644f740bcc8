"""/api/v1/namespaces/<name>/wake/: wake a namespace now (or keep it awake) for some hours.
Its schedule changes through the requests (POST /api/v1/requests/, kind "sleep")."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants.api.serializers.sleep import WakeSerializer, WokenSerializer
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.models.tokens import TokenScope
from tenants.selectors import kubeconfig
from tenants.services.sleep import wake_namespace


class NamespaceWakeView(ApiView, APIView):
    # Waking is asked with what a token asks requests with.
    scopes = {"*": TokenScope.REQUEST}

    @extend_schema(
        summary="Wake a namespace now, or keep it awake past its schedule's sleep, for some "
        "hours (its tenant's owners and members, platform admins); audited",
        description="Its workloads come back at once: `asleep` turns false once the cluster "
        "has them (GET the namespace's `sleep`). A viewer is refused (403), a namespace "
        "outside your tenants is not found (404), hours outside 1 to its tier's longest "
        "wake are a 400 on `hours`, a namespace without a sleep schedule or not live a 409.",
        parameters=[
            OpenApiParameter(
                "namespace",
                str,
                OpenApiParameter.PATH,
                description="The namespace's name (a live one), or its id.",
            )
        ],
        request=WakeSerializer,
        responses={
            200: WokenSerializer,
            409: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="It has no sleep schedule (it is always awake) or is not live.",
            ),
        },
    )
    def post(self, request: ApiRequest, namespace: str) -> Response:
        asked = validated(WakeSerializer, request.data)
        found = kubeconfig.namespace_by_reference(
            request.user, namespace, cluster=asked.get("cluster", "")
        )
        until = wake_namespace(
            namespace_id=found.pk,
            actor=request.user,
            hours=asked.get("hours"),
            source_ip=client_ip(request),
        )
        found.refresh_from_db(fields=["asleep"])  # the engine may have woken it already
        return Response(
            WokenSerializer(
                {
                    "id": found.pk,
                    "namespace": found.name,
                    "cluster": found.cluster.name,
                    "awake_until": until,
                    "asleep": found.asleep,
                }
            ).data
        )
