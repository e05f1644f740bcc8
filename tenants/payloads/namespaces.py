"""Payloads of namespaces and projects: a new namespace, project or environment of a
project, a quota change, a decommission.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.choices import EnvironmentState, GitOpsEngine
from tenants.models import Project
from tenants.name_registry import project_exists, project_names, tier_name
from tenants.payloads.base import QuotaFields, TenantScoped
from tenants.payloads.fields import APP_NAME_MAX, dns_label


class NamespacePayload(TenantScoped, QuotaFields):
    app = serializers.CharField(max_length=APP_NAME_MAX, validators=[dns_label])
    tier = serializers.SlugField()
    cluster = serializers.SlugField()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        tier = self._tier(data["tier"])
        self._cluster(data["cluster"])
        self._within_tier(tier, data)
        self._check_names([tier_name(self.tenant, data["app"], tier.slug)], cluster=data["cluster"])
        return data


class ProjectPayload(TenantScoped):
    app = serializers.CharField(max_length=APP_NAME_MAX, validators=[dns_label])
    engine = serializers.ChoiceField(choices=GitOpsEngine.choices)
    cluster = serializers.SlugField()
    tiers = serializers.ListField(
        child=serializers.SlugField(), min_length=1, default=["dev", "staging", "prod"]
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        for slug in data["tiers"]:
            self._tier(slug)
        self._cluster(data["cluster"])
        if data["engine"] == GitOpsEngine.FLUX and self.tenant.flux_problem():
            raise serializers.ValidationError(
                {"engine": f"{self.tenant.flux_problem()} (a platform admin sets it on the tenant)"}
            )
        if exists := project_exists(self.tenant, data["app"]):
            raise serializers.ValidationError({"app": exists})
        wanted = project_names(
            self.tenant, app=data["app"], tiers=data["tiers"], engine=data["engine"]
        )
        self._check_names(wanted, cluster=data["cluster"])
        return data


class EnvironmentPayload(TenantScoped, QuotaFields):
    project = serializers.SlugField()
    tier = serializers.SlugField()
    cluster = serializers.SlugField()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if not Project.objects.filter(tenant=self.tenant, name=data["project"]).exists():
            raise serializers.ValidationError(
                {"project": f"{data['project']!r} is not a project of this tenant."}
            )
        tier = self._tier(data["tier"])
        self._cluster(data["cluster"])
        self._within_tier(tier, data)
        wanted = [tier_name(self.tenant, data["project"], tier.slug)]
        self._check_names(wanted, cluster=data["cluster"], field="tier")
        return data


class QuotaChangePayload(TenantScoped, QuotaFields):
    namespace = serializers.CharField(max_length=63)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        self._within_tier(namespace.tier, data)
        return data


class DecommissionPayload(TenantScoped):
    namespace = serializers.CharField(max_length=63)
    reason = serializers.CharField(max_length=500)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        hosted = namespace.ephemeral_environments.exclude(state=EnvironmentState.ENDED)
        if hosted.exists():
            slugs = ", ".join(sorted(hosted.values_list("slug", flat=True))[:5])
            raise serializers.ValidationError(
                {
                    "namespace": (
                        f"{namespace.name} hosts ephemeral environments ({slugs}): end them first."
                    )
                }
            )
        return data
