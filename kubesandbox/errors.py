"""Failures shaped like the apiserver's ``Status`` objects, so clients parse them as usual."""

from __future__ import annotations

from http import HTTPStatus

from .resources import ResourceType

# The reason the real apiserver puts in a Status for each code (used for injected faults too).
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def status_body(code: int, message: str, reason: str = "", details: dict | None = None) -> dict:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
        "reason": reason or REASONS.get(code, HTTPStatus(code).phrase.replace(" ", "")),
        "code": code,
    }
    if details is not None:
        body["details"] = details
    return body


class ApiError(Exception):
    """An error the HTTP layer turns into a ``Status`` response."""

    def __init__(
        self, code: int, message: str, reason: str = "", details: dict | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "")
        self.details = details

    def status(self) -> dict:
        return status_body(self.code, self.message, self.reason, self.details)


def _details(rt: ResourceType, name: str) -> dict:
    # Like the real server: "kind" holds the plural resource name here.
    details = {"name": name, "kind": rt.plural}
    if rt.group:
        details["group"] = rt.group
    return details


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, f'{rt.group_resource} "{name}" not found', details=_details(rt, name))


def already_exists(rt: ResourceType, name: str) -> ApiError:
    return ApiError(
        409, f'{rt.group_resource} "{name}" already exists', "AlreadyExists", _details(rt, name)
    )


def conflict(rt: ResourceType, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {rt.group_resource} "{name}": {why}',
        details=_details(rt, name),
    )


def forbidden(rt: ResourceType, name: str, why: str) -> ApiError:
    return ApiError(
        403, f'{rt.group_resource} "{name}" is forbidden: {why}', details=_details(rt, name)
    )


def invalid(rt: ResourceType, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """``causes`` are (reason, field, message) triples, e.g. FieldValueInvalid."""
    # Upstream: "<Kind>.<group> "name" is invalid: <one cause>" or "[<cause>, <cause>]".
    summary = ", ".join(f"{field}: {message}" for _, field, message in causes)
    details: dict = {
        "name": name,
        "kind": rt.kind,
        "causes": [{"reason": r, "field": f, "message": m} for r, f, m in causes],
    }
    if rt.group:
        details["group"] = rt.group
    if len(causes) > 1:
        summary = f"[{summary}]"
    qualified = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
    return ApiError(422, f'{qualified} "{name}" is invalid: {summary}', details=details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_found_path() -> ApiError:
    return ApiError(404, "the server could not find the requested resource", details={})


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "the server does not allow this method on the requested resource", details={}
    )


MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def continue_expired() -> ApiError:
    return ApiError(
        410,
        "The provided continue parameter is too old to display a consistent list result. "
        "You can start a new list without the continue parameter.",
        "Expired",
    )
