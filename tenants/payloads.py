"""Per-kind validation of request payloads, shared by web forms and the REST API.

Each kind has a serializer that checks shape and the tenant's own limits and returns a
normalised payload (quantities as integers in Berth's units, references by slug/name).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from tenants import quantities
from tenants.choices import GitOpsEngine, NamespaceState, RequestKind
from tenants.models import Namespace, Project, Tenant
from tenants.naming import namespace_name, outside_prefix_reason, reserved_reason
from tenants.validators import validate_dns_label

# A DNS label on its own; the composed namespace name is shortened to fit if needed.
APP_NAME_MAX = 63


def _dns_label(value: str) -> str:
    try:
        validate_dns_label(value)
    except DjangoValidationError as exc:
        raise serializers.ValidationError(exc.messages) from exc
    return value


class QuantityField(serializers.CharField):
    """A Kubernetes quantity string converted to an integer in one of Berth's units."""

    def __init__(self, *, convert, **kwargs) -> None:  # noqa: ANN001 - a converter function
        self.convert = convert
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        text = super().to_internal_value(data)
        try:
            return self.convert(text)
        except quantities.QuantityError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class _TenantScoped(serializers.Serializer):
    def __init__(self, *args, tenant: Tenant, **kwargs) -> None:  # noqa: ANN002, ANN003
        self.tenant = tenant
        super().__init__(*args, **kwargs)

    def _tier(self, slug: str):  # noqa: ANN202 - EnvironmentTier
        tier = self.tenant.allowed_tiers.filter(slug=slug).first()
        if tier is None:
            raise serializers.ValidationError(
                {"tier": f"Tier {slug!r} is not open to this tenant."}
            )
        return tier

    def _cluster(self, name: str) -> None:
        if not self.tenant.allowed_clusters.filter(name=name).exists():
            raise serializers.ValidationError(
                {"cluster": f"Cluster {name!r} is not open to this tenant."}
            )

    @staticmethod
    def _within_tier(tier, data: dict[str, Any]) -> None:  # noqa: ANN001 - EnvironmentTier
        limits = {
            "cpu": ("cpu_millis", tier.max_cpu_millis, quantities.millis_to_cpu),
            "memory": ("memory_mib", tier.max_memory_mib, quantities.mib_to_memory),
            "storage": ("storage_gib", tier.max_storage_gib, quantities.gib_to_storage),
        }
        errors = {}
        for field, (key, maximum, show) in limits.items():
            if key in data and data[key] > maximum:
                errors[field] = (
                    f"{show(data[key])} is more than the {tier.slug} tier allows ({show(maximum)})."
                )
        if errors:
            raise serializers.ValidationError(errors)

    def _check_names(self, names: list[str], *, cluster: str, field: str = "app") -> None:
        """Refuse reserved names, names outside the tenant's prefix and names already taken."""
        problems = []
        for name in names:
            reason = reserved_reason(
                name, berth_namespace=settings.BERTH_NAMESPACE
            ) or outside_prefix_reason(name, tenant=self.tenant.slug)
            if reason:
                problems.append(reason)
                continue
            taken = (
                Namespace.objects.filter(cluster__name=cluster, name=name)
                .exclude(state=NamespaceState.DECOMMISSIONED)
                .first()
            )
            if taken is None:
                continue
            if taken.state == NamespaceState.REQUESTED:
                problems.append(f"{name} is already requested (request #{taken.request_id}).")
            else:
                problems.append(f"{name} already exists on {cluster}.")
        if problems:
            raise serializers.ValidationError({field: problems})

    def _live_namespace(self, name: str) -> Namespace:
        namespace = Namespace.objects.filter(
            tenant=self.tenant, name=name, state=NamespaceState.ACTIVE
        ).first()
        if namespace is None:
            raise serializers.ValidationError(
                {"namespace": f"{name!r} is not an active namespace of this tenant."}
            )
        return namespace


class QuotaFields(serializers.Serializer):
    cpu = QuantityField(convert=quantities.cpu_to_millis, source="cpu_millis")
    memory = QuantityField(convert=quantities.memory_to_mib, source="memory_mib")
    storage = QuantityField(
        convert=quantities.storage_to_gib, source="storage_gib", required=False, default=0
    )


class NamespacePayload(_TenantScoped, QuotaFields):
    app = serializers.CharField(max_length=APP_NAME_MAX, validators=[_dns_label])
    tier = serializers.SlugField()
    cluster = serializers.SlugField()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        tier = self._tier(data["tier"])
        self._cluster(data["cluster"])
        self._within_tier(tier, data)
        self._check_names(
            [namespace_name(self.tenant.slug, data["app"], tier.slug)], cluster=data["cluster"]
        )
        return data


class ProjectPayload(_TenantScoped):
    app = serializers.CharField(max_length=APP_NAME_MAX, validators=[_dns_label])
    engine = serializers.ChoiceField(choices=GitOpsEngine.choices)
    cluster = serializers.SlugField()
    tiers = serializers.ListField(
        child=serializers.SlugField(), min_length=1, default=["dev", "staging", "prod"]
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        for slug in data["tiers"]:
            self._tier(slug)
        self._cluster(data["cluster"])
        if Project.objects.filter(tenant=self.tenant, name=data["app"]).exists():
            raise serializers.ValidationError({"app": f"Project {data['app']!r} already exists."})
        names = [namespace_name(self.tenant.slug, data["app"], slug) for slug in data["tiers"]]
        self._check_names(names, cluster=data["cluster"])
        return data


class EnvironmentPayload(_TenantScoped, QuotaFields):
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
        self._check_names(
            [namespace_name(self.tenant.slug, data["project"], tier.slug)],
            cluster=data["cluster"], field="tier",
        )
        return data


class QuotaChangePayload(_TenantScoped, QuotaFields):
    namespace = serializers.CharField(max_length=63)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        self._within_tier(namespace.tier, data)
        return data


class DecommissionPayload(_TenantScoped):
    namespace = serializers.CharField(max_length=63)
    reason = serializers.CharField(max_length=500)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        self._live_namespace(data["namespace"])
        return data


PAYLOADS: dict[str, type[_TenantScoped]] = {
    RequestKind.NAMESPACE: NamespacePayload,
    RequestKind.PROJECT: ProjectPayload,
    RequestKind.ENVIRONMENT: EnvironmentPayload,
    RequestKind.QUOTA_CHANGE: QuotaChangePayload,
    RequestKind.DECOMMISSION: DecommissionPayload,
}


def validate_payload(*, kind: str, tenant: Tenant, payload: dict[str, Any]) -> dict[str, Any]:
    """Return the normalised payload or raise rest_framework's ValidationError by field."""
    if kind not in PAYLOADS:
        raise serializers.ValidationError({"kind": f"Unknown request kind {kind!r}."})
    serializer = PAYLOADS[kind](data=payload, tenant=tenant)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
