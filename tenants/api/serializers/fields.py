"""Fields the API's serializers share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.models import Tenant
from tenants.selectors.groups import groups_of_other_tenants
from tenants.validators import GROUP_FIELDS, GROUP_NAME_MAX, validate_group_names

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


class TenantGroupNames:
    """A tenant's groups in one role: valid names, none looking like a group of another
    tenant, of the platform admins, or of this tenant in another role (given in the same
    body, or as stored)."""

    requires_context = True

    def __call__(self, value: list[str], field: serializers.Field) -> None:
        serializer = field.parent
        tenant = serializer.instance if isinstance(serializer.instance, Tenant) else None
        given = serializer.initial_data if isinstance(serializer.initial_data, dict) else {}
        elsewhere = []
        for name in GROUP_FIELDS:
            groups = given[name] if name in given else getattr(tenant, name, [])
            if name != field.field_name and isinstance(groups, list):
                elsewhere += [group for group in groups if isinstance(group, str)]
        validate_group_names(value, [*groups_of_other_tenants(tenant), *elsewhere])


def group_list(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=GROUP_NAME_MAX, trim_whitespace=False),
        max_length=100,
        validators=[TenantGroupNames()],
        **kwargs,
    )


def secret(*, max_length: int, help_text: str, **kwargs: Any) -> serializers.CharField:
    """A secret the caller may set and never reads back (its `<name>_set` says whether one is
    stored)."""
    return serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=max_length,
        help_text=help_text,
        **kwargs,
    )
