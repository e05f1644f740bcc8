"""Who is calling: the user, memberships and the credential used."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.models import ApiToken


class MembershipSummarySerializer(serializers.Serializer):
    tenant = serializers.CharField()
    role = serializers.CharField()


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField()
    is_platform_admin = serializers.BooleanField()
    memberships = MembershipSummarySerializer(many=True)
    authentication = serializers.ChoiceField(choices=["api_token", "oidc_access_token",
                                                      "session"])
    scopes = serializers.ListField(child=serializers.CharField(),
                                   help_text="What this credential may do.")
    token = serializers.DictField(allow_null=True, help_text="The API token, if one is used.")


def token_summary(token: ApiToken) -> dict[str, Any]:
    return {
        "name": token.name,
        "prefix": token.prefix,
        "scopes": token.scopes,
        "expires_at": serializers.DateTimeField().to_representation(token.expires_at)
        if token.expires_at else None,
    }
