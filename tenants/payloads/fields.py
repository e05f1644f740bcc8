"""Fields the payloads share: DNS labels, quantities in Berth's units, times to live."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from tenants import quantities
from tenants.validators import validate_dns_label

# A DNS label on its own; the composed namespace name is shortened to fit if needed.
APP_NAME_MAX = 63


def dns_label(value: str) -> str:
    try:
        validate_dns_label(value)
    except DjangoValidationError as exc:
        raise serializers.ValidationError(exc.messages) from exc
    return value


class QuantityField(serializers.CharField):
    """A Kubernetes quantity string converted to an integer in one of Berth's units."""

    def __init__(self, *, convert, **kwargs) -> None:
        self.convert = convert
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        text = super().to_internal_value(data)
        try:
            return self.convert(text)
        except quantities.QuantityError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class TtlField(serializers.CharField):
    """A time to live: 30m, 2h, 3d, 1d12h or seconds, converted to seconds (at least 60)."""

    def to_internal_value(self, data: Any) -> int:
        try:
            return quantities.ttl_to_seconds(super().to_internal_value(data))
        except quantities.QuantityError as exc:
            raise serializers.ValidationError(str(exc)) from exc
