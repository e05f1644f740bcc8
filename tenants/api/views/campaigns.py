"""/api/v1/campaigns/: upgrade campaigns (platform admins)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services
from tenants.api.permissions import IsPlatformAdmin, TokenHasScope
from tenants.api.serializers import campaigns as s
from tenants.api.views.base import ApiView, validated
from tenants.client_address import client_ip
from tenants.models.tokens import TokenScope


def _detail(pk: int) -> dict:
    campaign = selectors.campaign(pk)
    data = s.CampaignSerializer(campaign).data
    data["groups"] = s.DiffGroupSerializer(selectors.diff_groups(campaign), many=True).data
    data["targets"] = s.CampaignTargetSerializer(
        selectors.campaign_targets(campaign), many=True
    ).data
    data["commits"] = s.CampaignCommitSerializer(
        selectors.campaign_commits(campaign), many=True
    ).data
    return data


class CampaignListView(ApiView, APIView):
    permission_classes = [IsAuthenticated, TokenHasScope, IsPlatformAdmin]
    scopes = {"*": TokenScope.ADMIN}

    @extend_schema(
        operation_id="campaigns_list",
        summary="Upgrade campaigns, newest first (the last 100)",
        responses=s.CampaignSerializer(many=True),
    )
    def get(self, request: ApiRequest) -> Response:
        return Response(s.CampaignSerializer(selectors.campaigns()[:100], many=True).data)

    @extend_schema(
        operation_id="campaigns_create",
        summary="Start a campaign: compute each namespace's diff, ask the rules",
        request=s.CampaignCreateSerializer,
        responses={201: s.CampaignDetailSerializer},
    )
    def post(self, request: ApiRequest) -> Response:
        data = validated(s.CampaignCreateSerializer, request.data)
        campaign = services.create_campaign(
            actor=request.user, source_ip=client_ip(request), **data
        )
        return Response(_detail(campaign.pk), status=status.HTTP_201_CREATED)


class CampaignDetailView(ApiView, APIView):
    permission_classes = [IsAuthenticated, TokenHasScope, IsPlatformAdmin]

    @extend_schema(
        operation_id="campaigns_retrieve",
        summary="One campaign: its grouped diffs and every namespace's progress",
        responses=s.CampaignDetailSerializer,
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        return Response(_detail(pk))


class CampaignMoveView(ApiView, APIView):
    permission_classes = [IsAuthenticated, TokenHasScope, IsPlatformAdmin]
    scopes = {"*": TokenScope.ADMIN}

    @extend_schema(
        operation_id="campaigns_move",
        summary="approve, reject, pause, resume (retrying the failed) or rollback",
        request=None,
        responses=s.CampaignDetailSerializer,
    )
    def post(self, request: ApiRequest, pk: int, move: str) -> Response:
        services.CAMPAIGN_MOVES[move](
            campaign_id=selectors.campaign(pk).pk, actor=request.user, source_ip=client_ip(request)
        )
        return Response(_detail(pk))
