"""What every page view of the domain needs: the caller's address for the audit log, a
service's field errors put on the form that caused them, the platform-admin check.
"""

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from rest_framework.exceptions import ValidationError

from tenants import selectors


def client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR")


def field_errors(form, error: ValidationError) -> None:
    """Put the services' field errors on the form; unknown fields become form errors."""
    detail = error.detail if isinstance(error.detail, dict) else {None: error.detail}
    for field, problems in detail.items():
        target = field if field in form.fields else None
        for problem in problems if isinstance(problems, list) else [problems]:
            form.add_error(target, str(problem))


def require_platform_admin(request: HttpRequest) -> None:
    if not selectors.is_platform_admin(request.user):
        raise PermissionDenied("Only platform admins may do this.")
