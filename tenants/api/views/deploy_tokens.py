"""/api/v1/namespaces/<name>/deploy-tokens/ and /api/v1/deploy-tokens/<id>/revoke/."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services
from tenants.api.serializers.deploy_tokens import (
    DeployTokenMintSerializer,
    DeployTokenSerializer,
    MintedDeployTokenSerializer,
)
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.models.tokens import TokenScope
from tenants.selectors import kubeconfig

NAMESPACE = OpenApiParameter(
    "namespace",
    str,
    OpenApiParameter.PATH,
    description="The namespace's name (a live one), or its id.",
)


class NamespaceDeployTokensView(ApiView, APIView):
    scopes = {"*": TokenScope.REQUEST}

    @extend_schema(
        summary="A namespace's deploy tokens: who minted them, until when, revoked or not",
        parameters=[NAMESPACE],
        responses={200: DeployTokenSerializer(many=True)},
    )
    def get(self, request: ApiRequest, namespace: str) -> Response:
        found = kubeconfig.namespace_by_reference(
            request.user, namespace, cluster=request.query_params.get("cluster", "")
        )
        tokens = selectors.deploy_tokens_panel(request.user, found)["tokens"]
        return Response(DeployTokenSerializer(tokens, many=True).data)

    @extend_schema(
        summary="Mint a deploy token for a pipeline: the tier's member rights in this "
        "namespace, for at most an hour, as a kubeconfig",
        parameters=[NAMESPACE],
        request=DeployTokenMintSerializer,
        responses={201: MintedDeployTokenSerializer},
    )
    def post(self, request: ApiRequest, namespace: str) -> Response:
        asked = validated(DeployTokenMintSerializer, request.data)
        found = kubeconfig.namespace_by_reference(
            request.user, namespace, cluster=asked.get("cluster", "")
        )
        token, issued = services.mint_deploy_token(
            user=request.user,
            namespace=found,
            ttl_minutes=asked["ttl_minutes"],
            purpose=asked["purpose"],
            source_ip=client_ip(request),
        )
        shown = {
            "token": issued.token,
            "kubeconfig": selectors.token_kubeconfig(token, issued.token),
        }
        return Response(
            MintedDeployTokenSerializer(token, context=shown).data,
            status=status.HTTP_201_CREATED,
        )


class DeployTokenRevokeView(ApiView, APIView):
    scopes = {"*": TokenScope.REQUEST}

    @extend_schema(
        summary="Revoke a deploy token: its ServiceAccount goes, and every token of it stops",
        request=None,
        responses={200: DeployTokenSerializer},
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        token = selectors.visible_deploy_token(request.user, int(pk))
        revoked = services.revoke_deploy_token(
            user=request.user, token=token, source_ip=client_ip(request)
        )
        return Response(DeployTokenSerializer(revoked).data)
