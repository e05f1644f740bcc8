"""Access grants over the API: what asking for one takes, and a grant as the API shows it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from tenants import quantities, services
from tenants.models import AccessGrant
from tenants.selectors.access_grants import STATES


class AccessGrantCreateSerializer(serializers.Serializer):
    namespace = serializers.CharField(max_length=63, help_text="A live namespace's name.")
    role = serializers.CharField(
        max_length=40, help_text="One of the roles the namespace's tier offers (e.g. viewer)."
    )
    duration = serializers.CharField(
        max_length=20,
        help_text="How long, once approved: 15m, 1h, 1h30m (within the tier's bounds).",
    )
    # Blank passes here: the domain says what a reason is for.
    reason = serializers.CharField(
        max_length=500,
        allow_blank=True,
        help_text="Why you need it: the approvers read it, the audit log keeps it.",
    )
    cluster = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=63,
        help_text="The cluster, when a namespace of this name is live on more than one.",
    )


class AccessGrantPermissionsSerializer(serializers.Serializer):
    may_revoke = serializers.BooleanField(
        help_text="Whether you may end it early now: it is approved and not over, and you "
        "hold it, own its tenant or are a platform admin."
    )


class AccessGrantSerializer(serializers.ModelSerializer):
    """A grant; the caller (`context["user"]`) decides `permissions`."""

    state = serializers.ChoiceField(
        choices=list(STATES),
        read_only=True,
        help_text="pending (awaiting a decision), granting (approved, being bound), active, "
        "expired, revoked, refused (rejected, cancelled or returned), failed.",
    )
    namespace = serializers.CharField(source="namespace.name", read_only=True)
    cluster = serializers.CharField(source="namespace.cluster.name", read_only=True)
    tenant = serializers.CharField(
        source="namespace.tenant.slug",
        read_only=True,
        help_text="The namespace's tenant: it decides the grant.",
    )
    person = serializers.CharField(source="person.username", read_only=True)
    revoked_by = serializers.CharField(
        source="revoked_by.username", read_only=True, allow_null=True, default=None
    )
    duration = serializers.SerializerMethodField(help_text="As asked: e.g. 1h, 1h30m.")
    request = serializers.IntegerField(source="request_id", read_only=True)
    request_url = serializers.SerializerMethodField(help_text="The request's API URL.")
    permissions = serializers.SerializerMethodField()

    class Meta:
        model = AccessGrant
        fields = [
            "id",
            "state",
            "namespace",
            "cluster",
            "tenant",
            "person",
            "role",
            "cluster_role",
            "subject",
            "duration",
            "reason",
            "created_at",
            "starts_at",
            "expires_at",
            "revoked_at",
            "revoked_by",
            "ended_at",
            "request",
            "request_url",
            "permissions",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "subject": {"help_text": "The user name the cluster knows the person by (OIDC)."},
            "starts_at": {"help_text": "When it was approved: its time runs from then."},
            "ended_at": {"help_text": "When its binding was seen gone after it ended."},
        }

    @extend_schema_field(str)
    def get_duration(self, grant: AccessGrant) -> str:
        return quantities.seconds_to_duration(int(grant.duration.total_seconds()))

    @extend_schema_field(str)
    def get_request_url(self, grant: AccessGrant) -> str:
        return reverse("api:request-detail", kwargs={"pk": grant.request.pk})

    @extend_schema_field(AccessGrantPermissionsSerializer)
    def get_permissions(self, grant: AccessGrant) -> dict[str, Any]:
        user = self.context.get("user")
        if user is None or grant.state not in ("granting", "active"):
            return {"may_revoke": False}
        # Who may revoke turns on the person and the tenant alone: asked once per pair, not
        # once per row of a list.
        known = self.context.setdefault("may_revoke", {})
        key = (grant.namespace.tenant.pk, grant.person.pk == user.pk)
        if key not in known:
            known[key] = services.may_revoke(user, grant)
        return {"may_revoke": known[key]}
