"""Refuse an API body announced as too long before any view, authentication or throttle
reads it (tenants.api.parsers counts what actually arrives)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from tenants.api.exceptions import problem_response
from tenants.api.parsers import too_large_detail


class BodyLimitMiddleware:
    """413 for an API request whose Content-Length is past BERTH_API_MAX_BODY_BYTES."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            limit = settings.BERTH_API_MAX_BODY_BYTES
            try:
                announced = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                announced = 0
            if announced > limit:
                return problem_response(request, 413, "payload-too-large", too_large_detail(limit))
        return self.get_response(request)
