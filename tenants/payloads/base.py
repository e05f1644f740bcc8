"""What every payload checks against its tenant: tiers and clusters open to it, the tier's
maximum quota, names free in the registry, namespaces it has.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants import quantities
from tenants.choices import NamespaceState
from tenants.models import Cluster, Namespace, Tenant
from tenants.name_registry import Wanted, refusal
from tenants.payloads.fields import QuantityField


class TenantScoped(serializers.Serializer):
    def __init__(self, *args, tenant: Tenant, **kwargs) -> None:
        self.tenant = tenant
        super().__init__(*args, **kwargs)

    def _tier(self, slug: str):
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
    def _within_tier(tier, data: dict[str, Any]) -> None:
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

    def _check_names(self, wanted: list[Wanted], *, cluster: str, field: str = "app") -> None:
        """Refuse reserved names, names outside the tenant's prefix and names the registry
        holds for something else (or for this very thing, already requested): the check
        the request forms' name preview makes too (tenants.name_registry.refusal)."""
        where = Cluster.objects.get(name=cluster)
        problems = [
            refused.reason
            for name in wanted
            if (refused := refusal(where, name, tenant=self.tenant)) is not None
        ]
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
