"""Audit events."""

from __future__ import annotations

from rest_framework import serializers

from tenants.models import AuditEvent


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label", read_only=True)
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = AuditEvent
        fields = [
            "id",
            "created_at",
            "actor",
            "action",
            "object_type",
            "object_id",
            "object_repr",
            "tenant",
            "before",
            "after",
            "source_ip",
        ]
        read_only_fields = fields
