"""Namespaces and projects."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants import quantities, selectors
from tenants.api.serializers.requests import ConditionSerializer
from tenants.api.serializers.sleep import SleepSerializer, sleep_of
from tenants.models import Namespace, Project


class DefinitionSerializer(serializers.Serializer):
    tier_version = serializers.IntegerField(
        allow_null=True, help_text="The revision of its tier's definition it was last applied from."
    )
    bundle_version = serializers.IntegerField(
        allow_null=True, help_text="The revision of Berth's templates it was last applied from."
    )
    current = serializers.BooleanField()
    behind = serializers.ListField(
        child=serializers.CharField(), help_text="Why an upgrade is due, in plain words."
    )


class QuotaSerializer(serializers.Serializer):
    cpu = serializers.CharField()
    memory = serializers.CharField()
    storage = serializers.CharField()
    cpu_millis = serializers.IntegerField()
    memory_mib = serializers.IntegerField()
    storage_gib = serializers.IntegerField()


class NamespaceSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    tier = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    project_name = serializers.SerializerMethodField()
    quota = serializers.SerializerMethodField()
    definition = serializers.SerializerMethodField()
    conditions = ConditionSerializer(many=True, read_only=True)
    sleep = serializers.SerializerMethodField()

    class Meta:
        model = Namespace
        fields = [
            "id",
            "name",
            "tenant",
            "tier",
            "cluster",
            "project",
            "project_name",
            "state",
            "quota",
            "labels",
            "expires_at",
            "request",
            "drift",
            "drift_checked_at",
            "conditions",
            "definition",
            "sleep",
            "created_at",
        ]
        read_only_fields = fields

    def get_project_name(self, namespace: Namespace) -> str | None:
        return namespace.project.name if namespace.project_id else None

    @extend_schema_field(DefinitionSerializer)
    def get_definition(self, namespace: Namespace) -> dict[str, Any]:
        found = selectors.definition_of(namespace)
        return {
            "tier_version": found.version,
            "bundle_version": found.bundle,
            "current": not found.behind,
            "behind": list(found.behind),
        }

    @extend_schema_field(SleepSerializer)
    def get_sleep(self, namespace: Namespace) -> dict[str, Any]:
        return sleep_of(namespace)

    @extend_schema_field(QuotaSerializer)
    def get_quota(self, namespace: Namespace) -> dict[str, Any]:
        return {
            "cpu": quantities.millis_to_cpu(namespace.cpu_millis),
            "memory": quantities.mib_to_memory(namespace.memory_mib),
            "storage": quantities.gib_to_storage(namespace.storage_gib),
            "cpu_millis": namespace.cpu_millis,
            "memory_mib": namespace.memory_mib,
            "storage_gib": namespace.storage_gib,
        }


class ProjectSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Project
        fields = ["id", "tenant", "name", "gitops_engine", "created_at"]
        read_only_fields = fields
