"""/api/v1/tenants/{slug}/costs/ and /api/v1/clusters/{name}/prices/: showback."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants.pricing import PRICE_FIELDS, PRICE_MAX, PRICE_PLACES, price_problems
from tenants.selectors.charges import parse_month
from tenants.selectors.cost_window import GROUPS, LONGEST_DAYS
from tenants.selectors.costs import rounded


def _price_field(what: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=13,
        decimal_places=PRICE_PLACES,
        min_value=0,
        max_value=PRICE_MAX,
        required=False,
        help_text=f"The price {what}, a decimal string.",
    )


@extend_schema_field(OpenApiTypes.STR)
class EffectiveFrom(serializers.Field):
    """A date (YYYY-MM-DD) or an ISO 8601 date-time with its offset."""

    def to_internal_value(self, data: Any) -> date | datetime:
        text = data.strip() if isinstance(data, str) else ""
        try:
            parsed = (parse_date(text) or parse_datetime(text)) if text else None
        except ValueError:  # the shape of one, but no such day or time
            parsed = None
        if parsed is None:
            raise serializers.ValidationError(
                "Give a date (2026-12-01) or a date-time with its offset (2026-12-01T00:00:00Z)."
            )
        if isinstance(parsed, datetime) and parsed.tzinfo is None:
            raise serializers.ValidationError("Give the date-time's offset, e.g. Z or +01:00.")
        return parsed

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


class PricesSerializer(serializers.Serializer):
    cluster = serializers.CharField(read_only=True, source="cluster.name")
    currency = serializers.CharField(
        max_length=3, min_length=3, required=False, help_text="ISO 4217, e.g. EUR."
    )
    cpu_core_hour = _price_field(PRICE_FIELDS["cpu_core_hour"])
    memory_gib_hour = _price_field(PRICE_FIELDS["memory_gib_hour"])
    storage_gib_month = _price_field(PRICE_FIELDS["storage_gib_month"])
    namespace_month = _price_field(PRICE_FIELDS["namespace_month"])
    asleep_cpu_core_hour = _price_field(PRICE_FIELDS["asleep_cpu_core_hour"])
    asleep_memory_gib_hour = _price_field(PRICE_FIELDS["asleep_memory_gib_hour"])
    effective_from = EffectiveFrom(
        required=False,
        allow_null=True,
        help_text="When these prices apply: now when absent on a change; a date (its first "
        "midnight) or a date-time, never in the past. Null before the cluster has prices.",
    )
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


class PricesAnswerSerializer(PricesSerializer):
    upcoming = PricesSerializer(
        many=True, read_only=True, help_text="Prices set to apply from a later date."
    )


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


@extend_schema_field(OpenApiTypes.STR)
class Hours(serializers.Field):
    """Hours to the hundredth, as a decimal string ("12.50")."""

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
    charged_from = serializers.DateTimeField(
        help_text="The first instant charged in the month: Ready, or the month's start."
    )
    ended_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When it stopped holding its quota (gone); null while it holds it.",
    )
    currency = serializers.CharField()
    per_day = Money()
    month = Money(help_text="Its cost in the month.")
    today = Money()
    expires_at = serializers.DateTimeField(allow_null=True)
    until_expiry = Money(
        allow_null=True, help_text="An ephemeral environment's cost from now until it expires."
    )
    asleep = serializers.BooleanField(help_text="Asleep now (hibernation).")
    asleep_hours = Hours(help_text="Hours it slept in the month, charged at the asleep prices.")
    savings = Money(help_text="What those hours would have cost awake, less what they cost.")
    days = serializers.SerializerMethodField()

    def get_days(self, row: Any) -> dict[str, str]:
        return {day.isoformat(): str(rounded(amount)) for day, amount in sorted(row.by_day.items())}


class AmountRowSerializer(serializers.Serializer):
    name = serializers.CharField()
    cost = Money()

    def to_representation(self, instance: Any) -> dict[str, str]:
        name, amount = instance
        return {"name": name, "cost": str(rounded(amount))}


class AdjustmentSerializer(serializers.Serializer):
    amount = Money()
    currency = serializers.CharField()
    note = serializers.CharField()
    namespace = serializers.CharField()
    added_at = serializers.DateTimeField()
    added_by = serializers.CharField()


class CostsSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    month = serializers.DateField()
    closed = serializers.BooleanField(
        help_text="Counted into rows that never change (at the start of the next month)."
    )
    currency = serializers.CharField()
    charged = Money(help_text="What the namespaces' allocations cost in the month.")
    adjusted = Money(help_text="The sum of the month's dated adjustments.")
    total = Money(help_text="charged + adjusted.")
    adjustments = AdjustmentSerializer(many=True)
    today = Money()
    until_expiry = Money()
    asleep_hours = Hours(help_text="Namespace-hours slept in the month (hibernation).")
    savings = Money(
        help_text="What sleeping saved in the month: those hours awake, less what they cost."
    )
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


class AdjustmentInputSerializer(serializers.Serializer):
    tenant = serializers.SlugField(max_length=63, help_text="The tenant's slug.")
    month = serializers.RegexField(
        r"^[0-9]{4}-(0[1-9]|1[0-2])\Z",
        help_text="The closed month corrected, YYYY-MM.",
        error_messages={"invalid": "Give a month as YYYY-MM."},
    )
    amount = serializers.DecimalField(
        max_digits=16,
        decimal_places=6,
        help_text="Added to the month's total; negative for a credit. A decimal string.",
    )
    note = serializers.CharField(max_length=500, help_text="Why: shown beside the adjustment.")
    namespace = serializers.CharField(
        max_length=63, required=False, allow_blank=True, help_text="The namespace it concerns."
    )
    currency = serializers.CharField(
        min_length=3,
        max_length=3,
        required=False,
        allow_blank=True,
        help_text="ISO 4217; the month's currency when absent.",
    )


class AdjustmentAnswerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    tenant = serializers.CharField(source="tenant.slug")
    month = serializers.DateField()
    amount = Money(source="cost")
    currency = serializers.CharField()
    note = serializers.CharField()
    namespace = serializers.CharField(source="namespace_name")
    added_at = serializers.DateTimeField(source="created_at")


class WindowQuerySerializer(serializers.Serializer):
    start = EffectiveFrom(
        help_text="The window's start: a date (its first midnight) or a date-time with its offset."
    )
    end = EffectiveFrom(help_text="The window's end (excluded), as `start`; now at most.")
    by = serializers.ChoiceField(
        choices=GROUPS, help_text="What the costs are added up by.", default="tenant"
    )
    tenant = serializers.SlugField(
        max_length=63, required=False, help_text="One tenant's only (its slug)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = _moment(attrs["start"]), _moment(attrs["end"])
        if end <= start:
            raise serializers.ValidationError({"end": ["The end comes after the start."]})
        if end - start > timedelta(days=LONGEST_DAYS):
            raise serializers.ValidationError(
                {"end": [f"A window is at most {LONGEST_DAYS} days long."]}
            )
        return {**attrs, "start": start, "end": end}


def _moment(value: date | datetime) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.combine(value, datetime.min.time(), tzinfo=timezone.get_current_timezone())


class WindowCostSerializer(serializers.Serializer):
    key = serializers.CharField(
        help_text="The namespace (cluster/name), project (tenant/project), tier, tenant or cluster."
    )
    currency = serializers.CharField()
    cost = Money()
    namespaces = serializers.IntegerField(help_text="How many namespaces held something.")


class WindowCostsSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    by = serializers.CharField()
    costs = WindowCostSerializer(many=True)
