"""Every request and answer checked with openapi-core against GitHub's description (``spec``).

A request that breaks the operation's schema is refused as GitHub refuses it (400 "Problems
parsing JSON" for a body that is not JSON, 422 "Invalid request." naming the first problem
otherwise), before any handler sees it. An answer that breaks it is the stand-in's own bug:
the caller turns it into a 500 carrying the validation error, and records it.

Statuses an operation does not document (GitHub documents 401 almost nowhere, though every
endpoint answers it) are checked against the description's ``basic-error`` schema, the shape
of every GitHub error body, with the same JSON Schema validator openapi-core uses."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_core.templating.paths.exceptions import PathError
from openapi_core.templating.responses.exceptions import ResponseNotFound
from openapi_core.validation.request.exceptions import (
    MissingRequiredParameter,
    MissingRequiredRequestBody,
    RequestValidationError,
)
from openapi_core.validation.response.exceptions import ResponseValidationError
from openapi_core.validation.schemas.exceptions import InvalidSchemaValue
from openapi_schema_validator import OAS30Validator
from werkzeug.datastructures import Headers, ImmutableMultiDict

from .spec import SERVER

DOCUMENTATION_URL = "https://docs.github.com/rest"


@dataclass
class ForgeRequest:
    """What openapi-core reads of a request (its ``Request`` protocol): the path is the API
    path without the stand-in's prefix, matched against the description's own server."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes | None
    content_type: str
    host_url: str = SERVER
    parameters: RequestParameters = field(init=False)

    def __post_init__(self) -> None:
        self.method = self.method.lower()
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(self.query), header=Headers(self.headers)
        )


@dataclass
class ForgeResponse:
    """What openapi-core reads of an answer (its ``Response`` protocol)."""

    status_code: int
    data: bytes
    content_type: str = "application/json"
    headers: Headers = field(default_factory=Headers)


@dataclass(frozen=True)
class Refusal:
    """How GitHub answers a request that does not conform, and why."""

    status: int
    message: str
    detail: str


def _schema_errors(error: BaseException) -> list[Any]:
    """The jsonschema errors under an openapi-core error (they hang off its cause chain)."""
    seen: list[Any] = []
    while error is not None:
        if isinstance(error, InvalidSchemaValue):
            seen.extend(error.schema_errors)
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
        if seen:
            break
    return seen


def describe(error: BaseException) -> str:
    """One line per schema problem, with where it is, else the error's own text."""
    problems = []
    for schema_error in _schema_errors(error):
        where = "/".join(str(part) for part in schema_error.absolute_path)
        problems.append(f"{where or '(root)'}: {schema_error.message}")
    head = f"{type(error).__name__}: {error}"
    return head if not problems else head + " [" + "; ".join(problems) + "]"


def _github_message(error: BaseException) -> str:
    """GitHub's words for the first problem: '"head" wasn't supplied.' for a missing field,
    "For 'properties/title', 5 is not a string." otherwise."""
    if isinstance(error, MissingRequiredParameter):
        return f'"{error.name}" wasn\'t supplied.'
    for schema_error in _schema_errors(error):
        if schema_error.validator == "required":
            missing = schema_error.message.split("'")[1] if "'" in schema_error.message else ""
            return f'"{missing}" wasn\'t supplied.'
        where = "/".join(f"properties/{part}" for part in schema_error.absolute_path)
        return f"For '{where or 'items'}', {schema_error.message}."
    return str(error)


class Validator:
    def __init__(self, openapi: OpenAPI, document: dict) -> None:
        self.openapi = openapi
        # A plain schema (no $ref in it), so the validator needs no resolver.
        self._basic_error = OAS30Validator(document["components"]["schemas"]["basic-error"])

    def check_request(self, request: ForgeRequest) -> Refusal | None:
        if request.body:
            try:
                json.loads(request.body)
            except ValueError as error:
                return Refusal(400, "Problems parsing JSON", str(error))
        try:
            self.openapi.validate_request(request)
        except PathError:
            return None  # not GitHub's path: the router answers 404 as GitHub does
        except MissingRequiredRequestBody as error:
            return Refusal(422, "Invalid request.\n\nNo body given.", describe(error))
        except RequestValidationError as error:
            return Refusal(422, f"Invalid request.\n\n{_github_message(error)}", describe(error))
        return None

    def check_response(self, request: ForgeRequest, response: ForgeResponse) -> str | None:
        """None when the answer conforms; else what is wrong with it."""
        try:
            self.openapi.validate_response(request, response)
        except PathError:
            return None
        except ResponseNotFound as error:
            if response.status_code < 400:
                return describe(error)
            body = json.loads(response.data or b"null")
            problems = [e.message for e in self._basic_error.iter_errors(body)]
            return f"not a GitHub error body: {'; '.join(problems)}" if problems else None
        except ResponseValidationError as error:
            return describe(error)
        return None
