"""Security headers beyond Django's own (SecurityMiddleware: HSTS, nosniff, referrer and
opener policies; X-Frame-Options): the Content-Security-Policy (django-csp; the directives
are in settings) and Cross-Origin-Resource-Policy.

The policy allows Berth's own scripts and styles only. Forms post to Berth, and to the
identity provider, where sign-out redirects the form's POST (browsers check form-action on
that redirect): its origin is read from the settings when each answer is made, so it
follows the configured provider."""

from __future__ import annotations

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase


def origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if scheme and rest else ""


class PolicyMiddleware(CSPMiddleware):
    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        provider = sorted(
            {origin(url) for url in (settings.OIDC_ISSUER, settings.OIDC_OP_LOGOUT_ENDPOINT)} - {""}
        )
        if provider and not report_only:
            parts.update = {**(parts.update or {}), "form-action": provider}
        return parts

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        response = super().process_response(request, response)
        # Other sites may not embed what Berth serves (pages, API answers, static files).
        response.headers.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        return response
