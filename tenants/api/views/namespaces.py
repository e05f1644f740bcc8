"""/api/v1/namespaces/, /projects/ and a project's environments."""

from __future__ import annotations

from typing import Any

from django.utils.cache import patch_vary_headers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, viewsets
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services
from tenants.api import serializers as s
from tenants.api.renderers import KubeconfigRenderer
from tenants.api.serializers.kubeconfig import KubeconfigQuerySerializer, KubeconfigSerializer
from tenants.api.views.base import ID, ApiView, validated
from tenants.client_address import client_ip
from tenants.filtersets import NamespaceFilterSet, ProjectFilterSet
from tenants.models import Namespace, Project
from tenants.selectors import kubeconfig
from tenants.selectors.kubeconfig import MEDIA_TYPE


@extend_schema_view(
    list=extend_schema(summary="Namespaces of your tenants: state, quota, drift"),
    retrieve=extend_schema(summary="One namespace"),
)
class NamespaceViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.NamespaceSerializer
    filterset_class = NamespaceFilterSet
    ordering_fields = ["name", "created_at", "state"]
    ordering = ["name", "id"]
    lookup_value_regex = ID

    queryset = Namespace.objects.none()

    def visible(self, user: Any) -> Any:
        # The tiers' revisions: a namespace behind its tier names the version available.
        return selectors.namespaces_visible_to(user).prefetch_related("tier__revisions")

    def get_object(self) -> Any:
        return selectors.visible_namespace(self.request.user, int(self.kwargs["pk"]))


@extend_schema_view(
    list=extend_schema(summary="Application projects of your tenants"),
    retrieve=extend_schema(summary="One project"),
)
class ProjectViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.ProjectSerializer
    filterset_class = ProjectFilterSet
    ordering_fields = ["name", "created_at"]
    ordering = ["tenant__slug", "name"]
    lookup_value_regex = ID

    queryset = Project.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.projects_visible_to(user)

    def get_object(self) -> Any:
        return selectors.visible_project(self.request.user, int(self.kwargs["pk"]))


@extend_schema(summary="Environments of a project: its namespaces, one per tier")
class ProjectEnvironmentsView(ApiView, generics.ListAPIView):
    serializer_class = s.NamespaceSerializer
    ordering_fields = ["name", "created_at", "state"]
    ordering = ["tier__position", "name"]

    queryset = Namespace.objects.none()

    def named_object_visible(self, user: Any) -> bool:
        return selectors.projects_visible_to(user).filter(pk=self.kwargs["pk"]).exists()

    def visible(self, user: Any) -> Any:
        project = selectors.visible_project(user, int(self.kwargs["pk"]))
        return selectors.namespaces_visible_to(user).filter(project=project)


class NamespaceKubeconfigView(ApiView, APIView):
    # JSON by default (existing clients read it); the file itself when asked for.
    renderer_classes = [JSONRenderer, KubeconfigRenderer]

    @extend_schema(
        summary="Use it: a kubeconfig for a namespace you can see, signing in through the "
        "identity provider, and what kubectl should answer you there",
        description="JSON by default. With `Accept: application/yaml` or `?format=yaml`, "
        "the kubeconfig itself, as a file to save (`Content-Disposition: attachment; "
        "filename=<namespace>-kubeconfig.yaml`).",
        parameters=[
            KubeconfigQuerySerializer,
            OpenApiParameter(
                "namespace",
                str,
                OpenApiParameter.PATH,
                description="The namespace's name (a live one), or its id.",
            ),
            OpenApiParameter(
                "format",
                str,
                OpenApiParameter.QUERY,
                enum=["json", "yaml"],
                description="yaml: the kubeconfig itself (as `Accept: application/yaml`).",
            ),
        ],
        responses={
            (200, "application/json"): KubeconfigSerializer,
            (200, MEDIA_TYPE): OpenApiResponse(
                OpenApiTypes.STR, description="The kubeconfig, as a file to save."
            ),
            (409, "application/problem+json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="No kubeconfig can be made: Berth has no identity "
                "provider configured, the cluster has no API URL, or the name is live on more "
                "than one cluster (name one with cluster).",
            ),
        },
    )
    def get(self, request: ApiRequest, namespace: str) -> Response:
        query = validated(KubeconfigQuerySerializer, request.query_params)
        # Refusals (no provider, no API address, a name on two clusters) are 409 problems.
        # A live access grant's holder gets its namespace's kubeconfig too (and only that).
        found = kubeconfig.namespace_by_reference(
            request.user, namespace, cluster=query.get("cluster", ""), granted=True
        )
        answer = kubeconfig.use_it(request.user, found, credentials=query["credentials"])
        if answer.access.grant is not None:
            services.record_grant_kubeconfig(
                grant=answer.access.grant,
                actor=request.user,
                credentials=answer.credentials,
                source_ip=client_ip(request),
            )
        if request.accepted_renderer.format == KubeconfigRenderer.format:
            response = Response(answer.text, headers={"Content-Disposition": answer.disposition})
        else:
            response = Response(KubeconfigSerializer(answer).data)
        patch_vary_headers(response, ["Accept"])
        return response
