"""Ephemeral environments and a tenant's environment rules."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from tenants.choices import EndCause
from tenants.models import EphemeralEnvironment
from tenants.payloads import TtlField


class EphemeralEnvironmentSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    project = serializers.SlugRelatedField(slug_field="name", read_only=True)
    env_slug = serializers.CharField(source="slug", read_only=True)
    mr_id = serializers.CharField(source="merge_request", read_only=True)
    namespace = serializers.CharField(
        source="namespace.name", read_only=True, help_text="The namespace it deploys into."
    )
    cluster = serializers.CharField(source="namespace.cluster.name", read_only=True)
    shares_namespace = serializers.SerializerMethodField(
        help_text="True when the namespace is a shared one that outlives it."
    )
    rule = serializers.IntegerField(
        source="rule_position",
        read_only=True,
        allow_null=True,
        help_text="The environment rule that named the namespace (null: the default template).",
    )
    request_state = serializers.CharField(source="request.state", read_only=True)
    end_cause = serializers.ChoiceField(
        choices=EndCause.choices, allow_blank=True, read_only=True, help_text="Empty until it ends."
    )
    page = serializers.SerializerMethodField(
        help_text="Its page in Berth (a CI environment's url, for one)."
    )

    class Meta:
        model = EphemeralEnvironment
        fields = [
            "id",
            "tenant",
            "project",
            "env_slug",
            "branch",
            "mr_id",
            "namespace",
            "cluster",
            "shares_namespace",
            "rule",
            "state",
            "expires_at",
            "max_expires_at",
            "warned_at",
            "ended_at",
            "end_cause",
            "request",
            "request_state",
            "created_at",
            "page",
        ]
        read_only_fields = fields

    def get_page(self, environment: EphemeralEnvironment) -> str:
        path = reverse("environment-detail", kwargs={"pk": environment.pk})
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    def get_shares_namespace(self, environment: EphemeralEnvironment) -> bool:
        return not environment.owns_namespace


class EphemeralEnvironmentCreateSerializer(serializers.Serializer):
    """The tenant; everything else is the environment's payload (validated by the service)."""

    tenant = serializers.SlugField()
    project = serializers.CharField()
    env_slug = serializers.CharField(help_text="CI_ENVIRONMENT_SLUG, e.g. review-42.")
    branch = serializers.CharField(required=False, allow_blank=True)
    mr_id = serializers.CharField(required=False, allow_blank=True)
    cluster = serializers.CharField(required=False)
    tier = serializers.CharField(
        required=False, help_text="An ephemeral tier; the tenant's first one when left out."
    )
    ttl = serializers.CharField(
        required=False, help_text="e.g. 30m, 2h, 3d (the tier's default TTL when left out)."
    )
    cpu = serializers.CharField(required=False)
    memory = serializers.CharField(required=False)
    storage = serializers.CharField(required=False)


class EphemeralEnvironmentPreviewSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    cluster = serializers.CharField()
    tier = serializers.CharField()
    rule = serializers.IntegerField(allow_null=True)
    shares_namespace = serializers.BooleanField()
    creates_namespace = serializers.BooleanField()
    ttl_seconds = serializers.IntegerField()


class EnvironmentStopSerializer(serializers.Serializer):
    tenant = serializers.SlugField()
    project = serializers.CharField()
    env_slug = serializers.CharField()
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class EnvironmentEndSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class EnvironmentExtendSerializer(serializers.Serializer):
    ttl = TtlField(help_text="How long from now, e.g. 4h or 2d.")


class EnvironmentRuleSerializer(serializers.Serializer):
    # `if` is a Python keyword: the field is declared under another name and renamed.
    condition = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    namespace = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    refuse = serializers.BooleanField(required=False, default=False)
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["if"] = fields.pop("condition")
        fields["if"].help_text = (
            "A CEL expression over tenant, project, env_slug, branch, "
            'mr_id, e.g. env_slug.startsWith("review"); empty: always.'
        )
        return fields

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {
            "if": instance.condition,
            "namespace": instance.namespace_template,
            "refuse": instance.refuse,
            "message": instance.message,
        }


class EnvironmentRulesSerializer(serializers.Serializer):
    rules = EnvironmentRuleSerializer(many=True, help_text="In order; the first match wins.")
