"""Fields the API's serializers share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.validators import GROUP_NAME_MAX, validate_group_names

MAX_TEXT = 4000


class SlugReference(serializers.SlugRelatedField):
    """A reference by name or slug, refused before the database sees it if it cannot be one
    (PostgreSQL refuses NUL characters in text outright)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or "\x00" in data or len(data) > 100:
            self.fail("invalid")
        return super().to_internal_value(data)


class ChoiceLabel(serializers.CharField):
    """The label of a choice's value ("Ready" for "ready"). Read from the choices, not from
    the model's get_FOO_display: DRF inspects a method's signature on every row it reads, a
    sixth of a 50-row list page."""

    def __init__(self, choices: Any, **kwargs: Any) -> None:
        self.labels = {value: str(label) for value, label in choices}
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value: Any) -> str:
        return self.labels.get(value, str(value))


def group_list(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=GROUP_NAME_MAX, trim_whitespace=False),
        max_length=100, validators=[validate_group_names], **kwargs
    )
