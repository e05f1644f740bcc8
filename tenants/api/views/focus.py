"""/api/v1/costs/focus/ (anyone signed in: the tenants they belong to; platform admins:
every tenant): a month of showback as a FOCUS dataset, CSV or JSON."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from django.utils.cache import patch_vary_headers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request as ApiRequest
from rest_framework.views import APIView

from tenants import focus
from tenants.api.renderers import CsvRenderer
from tenants.api.serializers.focus import ROWS_SCHEMA, FocusQuerySerializer
from tenants.api.views.base import ApiView, validated
from tenants.selectors.charges import parse_month
from tenants.selectors.focus import focus_rows


class FormatOrAccept(DefaultContentNegotiation):
    """`?format=` names the answer's format, else the Accept header; a format the view does
    not write is a 400 naming `format` (not DRF's 404)."""

    def filter_renderers(self, renderers: list[Any], format: str) -> list[Any]:
        found = [renderer for renderer in renderers if renderer.format == format]
        if not found:
            raise ValidationError({"format": ["Give csv or json."]})
        return found


class FocusExportView(ApiView, APIView):
    # CSV by default (a finance tool's usual input); JSON when asked for.
    renderer_classes = [CsvRenderer, JSONRenderer]
    content_negotiation_class = FormatOrAccept

    @extend_schema(
        summary=f"A month of showback as a FOCUS {focus.VERSION} dataset: a row per charge "
        "of the tenants you belong to (platform admins: every tenant)",
        description="CSV by default (`Content-Disposition: attachment; "
        "filename=berth-focus-YYYY-MM.csv`); JSON, an array of an object per row, with "
        "`?format=json` or `Accept: application/json`. The columns are the FinOps Open Cost "
        "and Usage Specification's; docs/showback.md says what Berth puts in each.",
        parameters=[FocusQuerySerializer],
        responses={
            (200, CsvRenderer.media_type): OpenApiResponse(
                OpenApiTypes.STR, description="RFC 4180 CSV: a header, then a line per row."
            ),
            (200, "application/json"): OpenApiResponse(ROWS_SCHEMA, description="The rows."),
        },
    )
    def get(self, request: ApiRequest) -> StreamingHttpResponse:
        # A plain dict: an empty value is refused, not taken for one left out.
        query = validated(FocusQuerySerializer, request.query_params.dict())
        first = parse_month(query["month"])
        assert first is not None  # the serializer requires it
        found = focus_rows(request.user, first)
        if request.accepted_renderer.format == "json":
            response = StreamingHttpResponse(
                focus.json_chunks(found), content_type="application/json"
            )
        else:
            response = StreamingHttpResponse(
                focus.csv_chunks(found), content_type="text/csv; charset=utf-8"
            )
            response["Content-Disposition"] = (
                f'attachment; filename="berth-focus-{first:%Y-%m}.csv"'
            )
        patch_vary_headers(response, ["Accept"])
        return response
