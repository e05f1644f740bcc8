"""/api/v1/tenants/{slug}/budget-alerts/: a tenant's monthly cost alert and this month's
alerts."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants.api.serializers.costs import Money


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "format": "decimal",
        "pattern": r"^[0-9]{0,10}(?:\.[0-9]{0,2})?$",
        "maxLength": 40,
    }
)
class Threshold(serializers.Field):
    """The amount as a decimal string ("500.00"), or null or "" for none. What is wrong with
    one (negative, too many places, not a number) the service says, as on the page."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError(
                'Give the amount as a decimal string ("500.00"), or null for no cost alert.'
            )
        if len(data) > 40:
            raise serializers.ValidationError("At most 40 characters.")
        return data

    def to_representation(self, value: Any) -> str:
        return f"{value:.2f}"


class CostAlertSerializer(serializers.Serializer):
    monthly_cost_alert = Threshold(
        help_text="The monthly cost alert in the currency of the tenant's costs: its owners are "
        "told when the month's cost passes 80 % and 100 % of it. Null or empty: none."
    )


class BudgetAlertSerializer(serializers.Serializer):
    measure = serializers.CharField(help_text="cost, cpu, memory, storage or namespaces.")
    percent = serializers.IntegerField(help_text="80 or 100: the share of the limit passed.")
    detail = serializers.CharField(help_text="What was reached, of what, as people read it.")
    sent_at = serializers.DateTimeField()


class BudgetAlertsSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    month = serializers.DateField(help_text="The first day of the month shown.")
    monthly_cost_alert = Threshold(source="threshold", read_only=True)
    currency = serializers.SerializerMethodField()
    cost = Money(source="cost.amount", allow_null=True, help_text="The month's cost so far.")
    share = serializers.IntegerField(
        source="cost.share",
        allow_null=True,
        help_text="The month's cost as a whole percent of the monthly cost alert (rounded down).",
    )
    alerts = BudgetAlertSerializer(many=True, help_text="This month's alerts, oldest first.")

    def get_currency(self, panel: dict) -> str | None:
        return panel["cost"].unit if panel["cost"] is not None else None
