"""What every page view of the domain needs: the caller's address for the audit log, a
service's field errors put on the form that caused them, the platform-admin check, and a
long list's pages by cursor.
"""

from collections.abc import Callable
from typing import Protocol, TypeVar

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from tenants import selectors
from tenants.errors import InvalidInput


def field_errors(form, error: InvalidInput) -> None:
    """Put the services' field errors on the form; unknown fields become form errors."""
    for problem in error.messages:
        form.add_error(None, problem)
    for field, problems in error.field_errors.items():
        target = field if field in form.fields else None
        for problem in problems:
            form.add_error(target, problem)


def require_platform_admin(request: HttpRequest) -> None:
    if not selectors.is_platform_admin(request.user):
        raise PermissionDenied("Only platform admins may do this.")


class Cursor(Protocol):
    def encode(self) -> str: ...


C = TypeVar("C", bound=Cursor)
P = TypeVar("P")


def page_at_cursor(
    request: HttpRequest, read: Callable[[C | None], P], decode: Callable[[str], C]
) -> tuple[P, int, str]:
    """The page at the request's `cursor`, with 200; for a cursor that cannot be read, the
    first page, 400 and why."""
    try:
        cursor = request.GET.get("cursor")
        return read(decode(cursor) if cursor else None), 200, ""
    except InvalidInput as error:
        return read(None), 400, error.field_errors["cursor"][0]


def page_link(request: HttpRequest, cursor: Cursor | None) -> str:
    """This page's address with its filters, at `cursor` (the first page without one)."""
    query = request.GET.copy()
    query.pop("cursor", None)
    if cursor is not None:
        query["cursor"] = cursor.encode()
    return f"?{query.urlencode()}" if query else "?"
