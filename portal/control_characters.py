"""A URL whose path or query string holds a control character is a 400, for pages as for
the API, answered before any view, authentication or database query sees it (PostgreSQL
would refuse a NUL in text with a server error; see tenants.text for what is refused).

Pages get a short page saying which parameter; /api/ gets the API's validation problem
(application/problem+json) with the parameter as the field in `errors`. Form fields in
request bodies are checked by the forms themselves (tenants.forms.base), as field errors."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.html import format_html
from rest_framework.exceptions import ValidationError

from tenants.api.exceptions import PROBLEM_CONTENT_TYPE, problem_body
from tenants.text import control_character

NAME_SHOWN = 60  # characters of a parameter's name echoed back

PAGE = """<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Bad request · Berth</title>
<h1>Bad request</h1>
<p>{}</p>
<p><a href="/">Berth's home page</a></p>
</html>
"""


def url_problem(request: HttpRequest) -> tuple[str | None, str] | None:
    """(the query parameter or None for the path, what is wrong) for the first control
    character in the request's decoded path or query string; None when there is none."""
    found = control_character(request.path)
    if found:
        return None, f"The path holds {found}."
    for name, values in request.GET.lists():
        found = control_character(name)
        if found:
            return None, f"The name of a query parameter holds {found}."
        for value in values:
            found = control_character(value)
            if found:
                return name, f"The query parameter {name[:NAME_SHOWN]} holds {found}."
    return None


class ControlCharacterMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = url_problem(request)
        if problem is None:
            return self.get_response(request)
        parameter, message = problem
        if request.path.startswith("/api/"):
            body = problem_body(
                ValidationError({parameter[:NAME_SHOWN]: [message]} if parameter else [message]),
                400,
                request.path,
            )
            body["detail"] = message
            return JsonResponse(body, status=400, content_type=PROBLEM_CONTENT_TYPE)
        return HttpResponseBadRequest(format_html(PAGE, message))
