"""/api/v1/access/: the access map — search, one group, one person, one namespace."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors
from tenants.api.serializers import access_map as s
from tenants.api.views.base import ApiView, validated


class AccessSearchView(ApiView, APIView):
    @extend_schema(
        summary="Groups, people and live namespaces whose names hold q",
        parameters=[s.AccessQuerySerializer],
        responses=s.AccessSearchSerializer,
    )
    def get(self, request: ApiRequest) -> Response:
        query = validated(s.AccessQuerySerializer, request.query_params)
        found = selectors.search(request.user, query["q"])
        return Response(s.AccessSearchSerializer(found).data)


class GroupAccessView(ApiView, APIView):
    @extend_schema(
        summary="What an OIDC group gives in each tenant, on the clusters and in Berth",
        responses=s.GroupMapSerializer,
    )
    def get(self, request: ApiRequest, group: str) -> Response:
        return Response(s.GroupMapSerializer(selectors.group_map(request.user, group)).data)


class PersonAccessView(ApiView, APIView):
    @extend_schema(
        summary="Why a person may do what they do: groups, tenant roles, rules",
        responses=s.PersonMapSerializer,
    )
    def get(self, request: ApiRequest, username: str) -> Response:
        return Response(s.PersonMapSerializer(selectors.person_map(request.user, username)).data)


class NamespaceAccessView(ApiView, APIView):
    @extend_schema(
        summary="Who may do what in a live namespace, per cluster",
        responses=s.NamespaceMapSerializer(many=True),
    )
    def get(self, request: ApiRequest, name: str) -> Response:
        maps = selectors.namespace_maps(request.user, name)
        return Response(s.NamespaceMapSerializer(maps, many=True).data)
