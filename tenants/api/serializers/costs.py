"""/api/v1/tenants/{slug}/costs/ and /api/v1/clusters/{name}/prices/: showback."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants.pricing import PRICE_FIELDS, PRICE_MAX, PRICE_PLACES, price_problems
from tenants.selectors.costs import parse_month, rounded


def _price_field(what: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=13,
        decimal_places=PRICE_PLACES,
        min_value=0,
        max_value=PRICE_MAX,
        required=False,
        help_text=f"The price {what}, a decimal string.",
    )


class PricesSerializer(serializers.Serializer):
    cluster = serializers.CharField(read_only=True, source="cluster.name")
    currency = serializers.CharField(
        max_length=3, min_length=3, required=False, help_text="ISO 4217, e.g. EUR."
    )
    cpu_core_hour = _price_field(PRICE_FIELDS["cpu_core_hour"])
    memory_gib_hour = _price_field(PRICE_FIELDS["memory_gib_hour"])
    storage_gib_month = _price_field(PRICE_FIELDS["storage_gib_month"])
    namespace_month = _price_field(PRICE_FIELDS["namespace_month"])
    updated_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When the prices were last set; null before any were.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problems = price_problems(attrs)
        if problems:
            raise serializers.ValidationError({key: [value] for key, value in problems.items()})
        if isinstance(self.initial_data, dict):
            unknown = sorted(set(self.initial_data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Not a price field."] for name in unknown}
                )
        return attrs


class CostsQuerySerializer(serializers.Serializer):
    month = serializers.RegexField(
        r"^[0-9]{4}-(0[1-9]|1[0-2])\Z",
        required=False,
        help_text="YYYY-MM (1970-01 to 9998-12); this month when absent.",
        error_messages={"invalid": "Give a month as YYYY-MM."},
    )

    def validate_month(self, value: str) -> str:
        try:
            parse_month(value)
        except ValueError as exc:
            raise serializers.ValidationError(
                "Give a month between 1970-01 and 9998-12, as YYYY-MM."
            ) from exc
        return value


@extend_schema_field(OpenApiTypes.STR)
class Money(serializers.Field):
    """An amount to the cent, as a decimal string ("12.34")."""

    def to_representation(self, value: Any) -> str:
        return str(rounded(value))


class NamespaceCostSerializer(serializers.Serializer):
    name = serializers.CharField()
    cluster = serializers.CharField()
    project = serializers.CharField()
    tier = serializers.CharField()
    state = serializers.CharField()
    ephemeral = serializers.BooleanField()
    cpu_millis = serializers.IntegerField()
    memory_mib = serializers.IntegerField()
    storage_gib = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)
    end_unknown = serializers.BooleanField(help_text="Gone, and when is not recorded: not counted.")
    currency = serializers.CharField()
    per_day = Money()
    month = Money(help_text="Its cost in the month.")
    today = Money()
    expires_at = serializers.DateTimeField(allow_null=True)
    until_expiry = Money(
        allow_null=True, help_text="An ephemeral environment's cost from now until it expires."
    )
    days = serializers.SerializerMethodField()

    def get_days(self, row: Any) -> dict[str, str]:
        return {day.isoformat(): str(rounded(amount)) for day, amount in sorted(row.by_day.items())}


class AmountRowSerializer(serializers.Serializer):
    name = serializers.CharField()
    cost = Money()

    def to_representation(self, instance: Any) -> dict[str, str]:
        name, amount = instance
        return {"name": name, "cost": str(rounded(amount))}


class CostsSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    month = serializers.DateField()
    currency = serializers.CharField()
    total = Money()
    today = Money()
    until_expiry = Money()
    unpriced_clusters = serializers.ListField(child=serializers.CharField())
    other_currencies = serializers.ListField(child=serializers.CharField())
    days = serializers.SerializerMethodField()
    projects = AmountRowSerializer(many=True)
    tiers = AmountRowSerializer(many=True)
    namespaces = NamespaceCostSerializer(many=True)
    measured = serializers.SerializerMethodField()

    def get_days(self, costs: Any) -> dict[str, str]:
        return {each.day.isoformat(): str(rounded(each.amount)) for each in costs.days}

    def get_measured(self, costs: Any) -> dict[str, Any]:
        found = self.context.get("measured")
        if found is None or not found.configured:
            return {"configured": False, "problem": "", "namespaces": {}}
        return {"configured": True, "problem": found.problem, "namespaces": found.by_namespace}
