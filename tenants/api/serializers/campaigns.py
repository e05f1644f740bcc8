"""Upgrade campaigns over the API."""

from __future__ import annotations

from rest_framework import serializers

from tenants.api.serializers.fields import SlugReference
from tenants.choices import CampaignState, TargetState
from tenants.models import EnvironmentTier


def _number_of(revision: str, help_text: str | None = None) -> serializers.IntegerField:
    """The number of a revision the object may lack (null then)."""
    return serializers.IntegerField(
        source=f"{revision}.number", allow_null=True, default=None, help_text=help_text
    )


class CampaignTargetSerializer(serializers.Serializer):
    namespace = serializers.CharField(source="namespace.name")
    tenant = serializers.CharField(source="namespace.tenant.slug")
    wave = serializers.IntegerField(help_text="1 is the canary.")
    group = serializers.CharField(help_text="Same value: the same diff, up to the name.")
    state = serializers.ChoiceField(choices=TargetState.choices)
    from_version = _number_of(
        "from_tier_revision", "The tier definition it ran before; null: not recorded."
    )
    to_version = _number_of("to_tier_revision")
    from_bundle_version = _number_of("from_bundle_revision")
    error = serializers.CharField()
    applied_at = serializers.DateTimeField(allow_null=True)


class CampaignCommitSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    cluster = serializers.CharField(source="cluster.name")
    paths = serializers.ListField(
        child=serializers.CharField(), help_text="The files it adds, changes or deletes."
    )
    diff = serializers.CharField(help_text="Against the branch when the campaign was planned.")
    state = serializers.ChoiceField(
        choices=TargetState.choices, help_text="filed: its tenant_sync request carries the commit."
    )
    request = serializers.IntegerField(source="request_id", allow_null=True)
    request_state = serializers.CharField(source="request.state", allow_null=True, default=None)
    error = serializers.CharField()


class DiffGroupSerializer(serializers.Serializer):
    group = serializers.CharField()
    diff = serializers.CharField(
        help_text="The first namespace's YAML diff against what its cluster holds."
    )
    namespaces = serializers.ListField(child=serializers.CharField())


class CampaignSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    tier = serializers.CharField(source="tier.slug", allow_null=True, default=None)
    tier_version = _number_of(
        "tier_revision", "The tier definition it rolls out; null for every tier (each target says)."
    )
    bundle_version = _number_of("bundle_revision", "Berth's templates it rolls out.")
    reason = serializers.CharField()
    state = serializers.ChoiceField(choices=CampaignState.choices)
    status_message = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username")
    created_at = serializers.DateTimeField()
    policy_rule = serializers.CharField()
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True, default=None)
    canary = serializers.IntegerField()
    batch = serializers.IntegerField()
    namespaces = serializers.IntegerField(help_text="How many it reaches.")
    applied = serializers.IntegerField()
    failed = serializers.IntegerField()


class CampaignDetailSerializer(CampaignSerializer):
    groups = DiffGroupSerializer(many=True)
    targets = CampaignTargetSerializer(many=True)
    commits = CampaignCommitSerializer(many=True)


class CampaignCreateSerializer(serializers.Serializer):
    tier = SlugReference(
        slug_field="slug",
        queryset=EnvironmentTier.objects.all(),
        allow_null=True,
        required=False,
        default=None,
        help_text="The tier whose definition changed; null: every tier.",
    )
    reason = serializers.CharField(max_length=300)
    canary = serializers.IntegerField(min_value=1, max_value=1000, default=1)
    batch = serializers.IntegerField(min_value=1, max_value=1000, default=10)
