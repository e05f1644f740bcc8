"""/api/v1/tenants/{slug}/costs/history/: used against allocated, month over month."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants.selectors.costs import rounded
from tenants.selectors.usage_history import MONTHS, MONTHS_MAX


def _nullable_money(description: str) -> dict[str, Any]:
    return {"type": "string", "nullable": True, "description": description}


class HistoryQuerySerializer(serializers.Serializer):
    months = serializers.IntegerField(
        min_value=1,
        max_value=MONTHS_MAX,
        required=False,
        default=MONTHS,
        help_text=f"How many months, this one included (1 to {MONTHS_MAX}; {MONTHS} by default).",
    )


class UsageResourceSerializer(serializers.Serializer):
    unit = serializers.CharField(help_text="core-hours (CPU) or GiB-hours (memory).")
    allocated = serializers.FloatField(help_text="Held over the whole month.")
    used = serializers.FloatField(
        allow_null=True,
        help_text="Used on the hours measured (it may pass what was held there: quota bounds "
        "requests, not use); null when the month was not measured.",
    )
    idle = serializers.FloatField(
        allow_null=True,
        help_text="Held and not used on the hours measured, namespace by namespace and day by "
        "day; null when the month was not measured.",
    )


class UsageMonthSerializer(serializers.Serializer):
    month = serializers.SerializerMethodField()
    closed = serializers.BooleanField(help_text="Counted into rows that never change.")
    currency = serializers.CharField()
    other_currencies = serializers.ListField(
        child=serializers.CharField(),
        help_text="Currencies of namespaces left out of this month's figures.",
    )
    cost = serializers.SerializerMethodField()
    measured = serializers.SerializerMethodField()
    measured_share = serializers.SerializerMethodField()
    cpu = serializers.SerializerMethodField()
    memory = serializers.SerializerMethodField()
    used_cost = serializers.SerializerMethodField()
    idle_cost = serializers.SerializerMethodField()

    def get_month(self, month: Any) -> str:
        """YYYY-MM."""
        return f"{month.month:%Y-%m}"

    @extend_schema_field(OpenApiTypes.STR)
    def get_cost(self, month: Any) -> str:
        """What the namespaces' allocations cost in the month (adjustments left out)."""
        return str(rounded(month.figures.cost))

    def get_measured(self, month: Any) -> bool:
        """Whether any day of the month was measured."""
        return month.figures.measured

    def get_measured_share(self, month: Any) -> float:
        """The share of the namespace-hours held that fall on days measured, 0 to 1."""
        return round(month.figures.measured_share, 4)

    @extend_schema_field(UsageResourceSerializer)
    def get_cpu(self, month: Any) -> dict[str, Any]:
        return _resource(month.figures.cpu, "core-hours", month.figures.measured)

    @extend_schema_field(UsageResourceSerializer)
    def get_memory(self, month: Any) -> dict[str, Any]:
        return _resource(month.figures.memory, "GiB-hours", month.figures.measured)

    @extend_schema_field(
        _nullable_money(
            "The CPU and memory part of the cost used, on the hours measured; null when "
            "not measured."
        )
    )
    def get_used_cost(self, month: Any) -> str | None:
        return str(rounded(month.figures.used_cost)) if month.figures.measured else None

    @extend_schema_field(
        _nullable_money(
            "The CPU and memory part of the cost not used: the price of each core and GiB "
            "held and idle, hour by hour, on the hours measured; null when not measured."
        )
    )
    def get_idle_cost(self, month: Any) -> str | None:
        return str(rounded(month.figures.idle_cost)) if month.figures.measured else None


class UsageHistorySerializer(serializers.Serializer):
    tenant = serializers.CharField()
    months = UsageMonthSerializer(many=True, help_text="Oldest first; this month (so far) last.")


def _resource(quantity: Any, unit: str, measured: bool) -> dict[str, Any]:
    return {
        "unit": unit,
        "allocated": round(quantity.allocated, 2),
        "used": round(quantity.used, 2) if measured else None,
        "idle": round(quantity.idle, 2) if measured else None,
    }
