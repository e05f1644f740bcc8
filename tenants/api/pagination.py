"""Page-number pagination: `?page=2&page_size=100` (50 by default; more than 200 gives 200);
the audit log's by cursor.
A value that is not a whole number of at least 1 is refused (400), not quietly replaced: a
client that asked for something else should hear so."""

from __future__ import annotations

from typing import Any

from rest_framework import pagination
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from tenants import selectors


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


class AuditCursorPagination(pagination.BasePagination):
    """The audit log's pages, cut by position (tenants.selectors.audit): `next` and
    `previous` carry a `cursor`; no page counts the log. `?ordering=created_at` reads it
    oldest first (how a collector follows it), `-created_at` newest first (the default)."""

    page_size = 50
    max_page_size = 200
    cursor_query_param = "cursor"
    page_size_query_param = "page_size"

    def paginate_queryset(self, queryset, request, view=None):
        if "page" in request.query_params:
            raise ValidationError(
                {"page": ["The audit log has no page numbers: follow `next` (a cursor)."]}
            )
        values = request.query_params.getlist(self.cursor_query_param)
        if len(values) > 1:
            raise ValidationError({self.cursor_query_param: ["Give it once."]})
        cursor = selectors.AuditCursor.decode(values[0]) if values else None
        asked = whole_number(request, self.page_size_query_param)
        size = self.page_size if asked is None else min(asked, self.max_page_size)
        ordering = request.query_params.get("ordering", "-created_at").split(",")[0].strip()
        self.page = selectors.audit_page(
            queryset, cursor=cursor, size=size, oldest_first=ordering == "created_at"
        )
        self.request = request
        return self.page.events

    def _link(self, cursor) -> str | None:
        if cursor is None:
            return None
        url = self.request.build_absolute_uri()
        return replace_query_param(url, self.cursor_query_param, cursor.encode())

    def get_paginated_response(self, data) -> Response:
        return Response(
            {
                "next": self._link(self.page.next),
                "previous": self._link(self.page.previous),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        link = {"type": "string", "nullable": True, "format": "uri"}
        return {
            "type": "object",
            "required": ["next", "previous", "results"],
            "properties": {"next": link, "previous": link, "results": schema},
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {
                "name": self.cursor_query_param,
                "required": False,
                "in": "query",
                "description": "Where the page starts: the value in `next` or `previous`.",
                "schema": {"type": "string"},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": f"Events per page (at most {self.max_page_size}).",
                "schema": {"type": "integer", "minimum": 1},
            },
        ]
