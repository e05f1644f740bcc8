"""/api/v1/policy/what-if/: try a proposed approval rule set on past decisions."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import services, whatif
from tenants.api.permissions import IsPlatformAdmin
from tenants.api.serializers import policy as s
from tenants.api.views.base import ApiView, validated
from tenants.models.tokens import TokenScope


class PolicyWhatIfView(ApiView, APIView):
    permission_classes = [*ApiView.permission_classes, IsPlatformAdmin]
    # It saves nothing but reads every tenant's requests: an admin's token.
    scopes = {"*": TokenScope.ADMIN}

    @extend_schema(
        summary="What a proposed rule set would have decided on the last decided requests "
        "(platform admins); nothing is saved",
        request=s.WhatIfSerializer,
        responses=s.WhatIfResultSerializer,
    )
    def post(self, request: ApiRequest) -> Response:
        data = validated(s.WhatIfSerializer, request.data)
        rules = [s.ProposedRuleSerializer.to_rule(rule) for rule in data["rules"]]
        found = services.try_approval_rules(
            actor=request.user,
            rules=rules,
            tenant=data["tenant"],
            kind=data["kind"],
            since=data["since"],
            limit=data["limit"],
        )
        return Response(
            {
                "digest": whatif.proposal_digest(rules),
                "considered": found.considered,
                "reconstructed": found.reconstructed,
                "changed": found.changed,
                "counts": found.counts,
                "changes": s.ChangeSerializer(found.changes, many=True).data,
            }
        )
