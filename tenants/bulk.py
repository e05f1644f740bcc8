"""Writing many rows at once."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Case, Value, When


def update_each(model: type[models.Model], values: dict[int, dict[str, Any]]) -> int:
    """Rows of `model` by primary key, each to its own field values, in one UPDATE: a field
    every row takes alike is set plainly, only a field whose values differ gets a CASE.
    (Django's bulk_update writes a CASE for every field and row, which costs far more to
    build and send when, as usual here, most values are shared.)"""
    if not values:
        return 0
    fields = next(iter(values.values())).keys()
    assignments: dict[str, Any] = {}
    for name in fields:
        column = model._meta.get_field(name)
        distinct = {repr(row[name]) for row in values.values()}
        if len(distinct) == 1:
            assignments[column.attname] = Value(
                next(iter(values.values()))[name], output_field=column
            )
        else:
            assignments[column.attname] = Case(
                *(
                    When(pk=pk, then=Value(row[name], output_field=column))
                    for pk, row in values.items()
                ),
                output_field=column,
            )
    return model.objects.filter(pk__in=list(values)).update(**assignments)
