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


def group_list(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=GROUP_NAME_MAX, trim_whitespace=False),
        max_length=100, validators=[validate_group_names], **kwargs
    )
