"""Every API error as an RFC 9457 problem detail (`application/problem+json`).

    {"type": "/api/problems/validation-error", "title": "Your request is not valid.",
     "status": 400, "detail": "Invalid fields: payload.app.", "instance": "/api/v1/requests/",
     "errors": {"payload.app": ["Use lower-case letters, digits and dashes."]}}

`type` is a URI reference to a page describing the problem (`/api/problems/<slug>`);
`errors` (field → messages, nested fields joined with dots) comes with validation errors
only. Domain errors map to statuses here: InvalidInput → 400 (its fields in `errors`),
IllegalTransition and PlanMoved → 409, NotAllowed → 403, any other DomainError → 409;
Django's ValidationError → 400, PermissionDenied → 403, Http404 → 404.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from tenants.errors import (
    DomainError,
    IllegalTransition,
    InvalidInput,
    NotAllowed,
    PlanMoved,
    flatten_errors,
)

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_BASE = "/api/problems/"

# slug → (title, what it means and what to do), also served at /api/problems/<slug>.
PROBLEM_TYPES: dict[str, tuple[str, str]] = {
    "validation-error": (
        "Your request is not valid.",
        "One or more fields are missing or wrong; `errors` names each field with its messages.",
    ),
    "malformed-request": (
        "The request body could not be read.",
        "The body is not valid JSON (or not JSON at all), or nests deeper than 32 levels. Send "
        "`Content-Type: application/json`.",
    ),
    "payload-too-large": (
        "The request body is too long.",
        "The API reads bodies of up to BERTH_API_MAX_BODY_BYTES (1 MiB unless configured).",
    ),
    "not-authenticated": (
        "Authentication is required.",
        "Send `Authorization: Bearer <token>` with a Berth API token or an access token from "
        "the identity provider.",
    ),
    "authentication-failed": (
        "The credentials were refused.",
        "The token is unknown, revoked or expired, or the access token does not verify.",
    ),
    "forbidden": (
        "You may not do this.",
        "Your roles, the approval policy or the token's scopes do not allow it.",
    ),
    "not-found": (
        "Not found.",
        "Nothing is here, or it belongs to a tenant you are not a member of.",
    ),
    "method-not-allowed": ("Method not allowed.", "This resource does not accept that method."),
    "not-acceptable": (
        "Not acceptable.",
        "The API answers in JSON (a kubeconfig also as YAML: `Accept: application/yaml`).",
    ),
    "unsupported-media-type": ("Unsupported media type.", "Send the body as application/json."),
    "illegal-transition": (
        "The request cannot move there from its current state.",
        "Requests move submitted → approved | rejected | cancelled, approved → provisioning → "
        "ready | failed, failed → provisioning (retry).",
    ),
    "plan-changed": (
        "The plan changed since you read it.",
        "Approvals are bound to the plan's digest. Read the request again and approve the "
        "current plan (`current_plan_digest`).",
    ),
    "conflict": ("Conflict with the current state.", "A rule of the domain refused it."),
    "idempotency-key-in-use": (
        "A request with this Idempotency-Key is still being processed.",
        "Wait for the first request to finish, then retry: its answer will be replayed.",
    ),
    "idempotency-key-reused": (
        "This Idempotency-Key was used with a different request.",
        "Use a new key for a new request; a key is kept for 24 hours.",
    ),
    "throttled": ("Too many requests.", "Slow down: retry after `Retry-After` seconds."),
    "provider-unavailable": (
        "The identity provider could not be reached.",
        "Access tokens are checked against the provider's keys; try again later.",
    ),
    "error": ("The request failed.", ""),
}

BY_EXCEPTION: list[tuple[type[Exception], str]] = [
    (exceptions.ParseError, "malformed-request"),
    (exceptions.ValidationError, "validation-error"),
    (exceptions.NotAuthenticated, "not-authenticated"),
    (exceptions.AuthenticationFailed, "authentication-failed"),
    (exceptions.PermissionDenied, "forbidden"),
    (exceptions.NotFound, "not-found"),
    (exceptions.MethodNotAllowed, "method-not-allowed"),
    (exceptions.NotAcceptable, "not-acceptable"),
    (exceptions.UnsupportedMediaType, "unsupported-media-type"),
    (exceptions.Throttled, "throttled"),
]


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"
    problem = "conflict"

    def __init__(
        self, detail: str | None = None, *, problem: str | None = None, **extra: Any
    ) -> None:
        super().__init__(detail)
        if problem:
            self.problem = problem
        self.extra = extra


class Unprocessable(Conflict):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "unprocessable"


def problem_type(slug: str) -> str:
    return f"{PROBLEM_BASE}{slug}"


def validation_detail(exc: InvalidInput) -> dict[str, list[str]] | list[str]:
    """The domain's refusal as DRF's ValidationError detail: what was wrong with the input
    as a whole under `non_field_errors`, beside the fields."""
    if not exc.messages:
        return exc.field_errors
    if not exc.field_errors:
        return exc.messages
    return {"non_field_errors": exc.messages, **exc.field_errors}


def _as_api_exception(exc: Exception) -> Exception:
    """Domain and Django exceptions as the DRF exceptions that say what status they are."""
    if isinstance(exc, IllegalTransition):
        return Conflict(str(exc), problem="illegal-transition")
    if isinstance(exc, PlanMoved):
        if exc.plan_error:
            return Conflict(exc.plan_error, problem="plan-changed")
        return Conflict(
            "The plan or its GitOps change moved since you read it: approve the current one.",
            problem="plan-changed",
            current_plan_digest=exc.current_digest,
        )
    if isinstance(exc, NotAllowed):
        return exceptions.PermissionDenied(str(exc))
    if isinstance(exc, InvalidInput):
        return exceptions.ValidationError(validation_detail(exc))
    if isinstance(exc, DomainError):
        return Conflict(str(exc))
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return exceptions.ValidationError(detail)
    if isinstance(exc, DjangoPermissionDenied):
        return exceptions.PermissionDenied(str(exc) or None)
    if isinstance(exc, Http404 | ObjectDoesNotExist):
        return exceptions.NotFound()
    return exc


def problem_body(exc: Exception, status_code: int, instance: str) -> dict[str, Any]:
    slug = getattr(exc, "problem", None)
    if slug is None:
        slug = next((s for kind, s in BY_EXCEPTION if isinstance(exc, kind)), None)
    if slug is None:
        slug = "provider-unavailable" if status_code == 503 else "error"
    title = PROBLEM_TYPES.get(slug, PROBLEM_TYPES["error"])[0]
    body: dict[str, Any] = {"type": problem_type(slug), "title": title, "status": status_code}
    if isinstance(exc, exceptions.ValidationError):
        errors = flatten_errors(exc.detail)
        body["detail"] = (
            "; ".join(errors["non_field_errors"])
            if list(errors) == ["non_field_errors"]
            else f"Invalid fields: {', '.join(errors)}."
        )
        body["errors"] = errors
    else:
        detail = getattr(exc, "detail", None)
        body["detail"] = str(detail if detail is not None else exc)
    body["instance"] = instance
    body.update(getattr(exc, "extra", {}))
    return body


def problem_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    exc = _as_api_exception(exc)
    response = exception_handler(exc, context)  # statuses, WWW-Authenticate, Retry-After
    if response is None:
        return None  # a bug: Django's 500 handling takes over
    request = context.get("request")
    response.data = problem_body(exc, response.status_code, request.path if request else "")
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def problem_response(
    request: HttpRequest, status_code: int, slug: str, detail: str
) -> JsonResponse:
    """A problem from a plain Django view (unknown API paths)."""
    return JsonResponse(
        {
            "type": problem_type(slug),
            "title": PROBLEM_TYPES[slug][0],
            "status": status_code,
            "detail": detail,
            "instance": request.path,
        },
        status=status_code,
        content_type=PROBLEM_CONTENT_TYPE,
    )
