"""A refused CSRF check answers in the caller's language: problem+json under /api/ (a
script calling the API with a session cookie gets an error it can read), Django's page
elsewhere."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.csrf import csrf_failure as page

from tenants.api.exceptions import problem_response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    if request.path.startswith("/api/"):
        return problem_response(
            request,
            403,
            "forbidden",
            f"CSRF check failed ({reason or 'no token'}): a session needs the X-CSRFToken "
            "header; pipelines should send Authorization: Bearer <token> instead.",
        )
    return page(request, reason=reason)
