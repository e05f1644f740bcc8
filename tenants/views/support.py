"""What every page view of the domain needs: the caller's address for the audit log, a
service's field errors put on the form that caused them, the platform-admin check.
"""

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from tenants import selectors
from tenants.errors import InvalidInput


def client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR")


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
