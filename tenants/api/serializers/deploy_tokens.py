"""Deploy tokens over the API: what minting one asks, and what comes back."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants.models import DeployToken
from tenants.selectors.deploy_tokens import LONGEST, SHORTEST

STATES = ["live", "expired", "revoked"]


class DeployTokenMintSerializer(serializers.Serializer):
    ttl_minutes = serializers.IntegerField(
        min_value=int(SHORTEST.total_seconds() // 60),
        max_value=int(LONGEST.total_seconds() // 60),
        default=30,
        help_text="How long the token works, in minutes (10 to 60).",
    )
    purpose = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text='What it is for, shown on the namespace page ("shop PR 42 deploy").',
    )
    cluster = serializers.CharField(
        required=False,
        max_length=63,
        help_text="The cluster, when a namespace of this name is live on more than one.",
    )


class DeployTokenSerializer(serializers.ModelSerializer):
    namespace = serializers.CharField(source="namespace.name")
    cluster = serializers.CharField(source="namespace.cluster.name")
    minted_by = serializers.CharField(source="minted_by.username")
    revoked_by = serializers.CharField(source="revoked_by.username", allow_null=True)
    state = serializers.ChoiceField(choices=STATES, help_text="Whether it still works.")

    class Meta:
        model = DeployToken
        fields = [
            "id",
            "namespace",
            "cluster",
            "service_account",
            "cluster_role",
            "purpose",
            "minted_by",
            "created_at",
            "expires_at",
            "revoked_at",
            "revoked_by",
            "state",
        ]


class MintedDeployTokenSerializer(DeployTokenSerializer):
    """The record, with the token and its kubeconfig passed in `context` (never stored)."""

    token = serializers.SerializerMethodField(
        help_text="The token itself: shown this once, never again."
    )
    kubeconfig = serializers.SerializerMethodField(
        help_text="A kubeconfig for the namespace that signs in with the token (YAML)."
    )

    @extend_schema_field(str)
    def get_token(self, _token: DeployToken) -> str:
        return self.context["token"]

    @extend_schema_field(str)
    def get_kubeconfig(self, _token: DeployToken) -> str:
        return self.context["kubeconfig"]

    class Meta(DeployTokenSerializer.Meta):
        fields = [*DeployTokenSerializer.Meta.fields, "token", "kubeconfig"]
