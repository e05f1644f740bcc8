"""Who is calling: the user, memberships and the credential used; and what they may change
of themselves (the notification events they are not e-mailed about)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.models import ApiToken
from tenants.notifications import EVENT_CHOICES

KNOWN_EVENTS = ", ".join(event for event, _ in EVENT_CHOICES)
UNKNOWN_EVENT = {"invalid_choice": f'"{{input}}" is not an event; the events: {KNOWN_EVENTS}.'}
MUTED_HELP = (
    "The events this person is not e-mailed about (their tenants' own addresses and "
    "webhooks still hear them). Every event not listed is e-mailed."
)


class MembershipSummarySerializer(serializers.Serializer):
    tenant = serializers.CharField()
    role = serializers.CharField()


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField()
    is_platform_admin = serializers.BooleanField()
    memberships = MembershipSummarySerializer(many=True)
    authentication = serializers.ChoiceField(choices=["api_token", "oidc_access_token", "session"])
    scopes = serializers.ListField(
        child=serializers.CharField(), help_text="What this credential may do."
    )
    token = serializers.DictField(allow_null=True, help_text="The API token, if one is used.")
    muted_notifications = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES), help_text=MUTED_HELP
    )


class MeUpdateSerializer(serializers.Serializer):
    """What a person may change of themselves."""

    muted_notifications = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES, error_messages=UNKNOWN_EVENT),
        required=False,
        help_text=MUTED_HELP + " Replaces the whole list.",
    )


def token_summary(token: ApiToken) -> dict[str, Any]:
    return {
        "name": token.name,
        "prefix": token.prefix,
        "scopes": token.scopes,
        "expires_at": serializers.DateTimeField().to_representation(token.expires_at)
        if token.expires_at
        else None,
    }
