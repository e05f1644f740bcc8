"""Nothing a signed-in person (or an authenticated API caller) was shown stays in a browser
or proxy cache: their answers carry `Cache-Control: no-store` unless a view said otherwise.
Static files and public pages keep their own caching."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control


class NoStoreForSignedInMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Cache-Control" in response:
            return response
        user = getattr(request, "user", None)
        signed_in = bool(user is not None and user.is_authenticated)
        if signed_in or "HTTP_AUTHORIZATION" in request.META:
            patch_cache_control(response, no_store=True, private=True)
        return response
