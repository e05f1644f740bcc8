"""/api/v1/costs/focus/: the query, and the answer's rows as JSON Schema says them."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants import focus
from tenants.selectors.charges import parse_month


class FocusQuerySerializer(serializers.Serializer):
    month = serializers.RegexField(
        r"^[0-9]{4}-(0[1-9]|1[0-2])\Z",
        help_text="The month to export, YYYY-MM (1970-01 to 9998-12); this month runs until now.",
        error_messages={
            "invalid": "Give a month as YYYY-MM.",
            "required": "Give the month to export as YYYY-MM, e.g. month=2026-10.",
        },
    )
    format = serializers.ChoiceField(
        choices=["csv", "json"],
        required=False,
        help_text="csv (the default) or json; or say it with the Accept header "
        "(text/csv, application/json).",
    )

    def validate_month(self, value: str) -> str:
        try:
            parse_month(value)
        except ValueError as exc:
            raise serializers.ValidationError(
                "Give a month between 1970-01 and 9998-12, as YYYY-MM."
            ) from exc
        return value


def _member(column: focus.Column) -> dict[str, Any]:
    if column.kind == "Decimal":
        schema: dict[str, Any] = {
            "type": "number",
            "description": "A decimal, written digit for digit (no exponent).",
        }
    elif column.kind == "JSON":  # Berth's tags: strings
        schema = {"type": "object", "additionalProperties": {"type": "string"}}
    elif column.kind == "Date/Time":
        schema = {"type": "string", "format": "date-time", "pattern": "^[0-9-]{10}T[0-9:]{8}Z$"}
    else:
        schema = {"type": "string", "minLength": 1}
    if column.nullable:
        schema["nullable"] = True
    return schema


ROWS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "description": f"A row of a FOCUS {focus.VERSION} dataset: a charge.",
        "properties": {column.name: _member(column) for column in focus.COLUMNS},
        "required": list(focus.NAMES),
    },
}
