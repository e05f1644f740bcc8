"""Page-number pagination: `?page=2&page_size=100` (50 by default; more than 200 gives 200).
A value that is not a whole number of at least 1 is refused (400), not quietly replaced: a
client that asked for something else should hear so."""

from __future__ import annotations

from typing import Any

from rest_framework import pagination
from rest_framework.exceptions import ValidationError


def whole_number(request: Any, name: str) -> int | None:
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise ValidationError({name: ["Give it once."]})
    value = values[0]
    if not value.isascii() or not value.isdigit():
        raise ValidationError({name: ["A whole number, such as 2."]})
    number = int(value[-10:]) if len(value.lstrip("0")) <= 10 else 10**10  # any huge number
    if number < 1:
        raise ValidationError({name: ["1 or more."]})
    return number


class PageNumberPagination(pagination.PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def paginate_queryset(self, queryset, request, view=None):
        whole_number(request, self.page_query_param)
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request) -> int:
        asked = whole_number(request, self.page_size_query_param)
        return self.page_size if asked is None else min(asked, self.max_page_size)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
        return parameters
