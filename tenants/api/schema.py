"""OpenAPI: how Berth's authentication shows in the schema, and the problem responses
every operation can give (application/problem+json)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from tenants.api.exceptions import PROBLEM_CONTENT_TYPE


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.api.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "berth_…",
            "description": "A personal API token (API tokens page, or `manage.py "
            "create_api_token`). Its scopes limit it: read, request, approve, admin.",
        }


PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An RFC 9457 problem detail.",
    "properties": {
        "type": {"type": "string", "description": "A URI reference naming the problem."},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
        "errors": {
            "type": "object",
            "description": "Validation errors by field (nested fields joined with dots).",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
    "required": ["type", "title", "status", "detail", "instance"],
    "additionalProperties": True,
}

PROBLEMS = {
    "400": "Invalid input (problem detail with `errors` by field).",
    "401": "No credentials, or a token that is unknown, revoked or expired.",
    "403": "Not allowed: roles, approval policy or the token's scopes.",
    "404": "Not found, or outside your tenants.",
    "429": "Throttled; see the Retry-After header.",
}
WRITE_PROBLEMS = {
    "409": "Conflicts with the current state (e.g. an illegal transition, a changed plan), or "
    "the Idempotency-Key is still in use.",
    "413": "The body is longer than the API reads (BERTH_API_MAX_BODY_BYTES).",
    "415": "The body is not JSON (send Content-Type: application/json).",
    "422": "The Idempotency-Key was used with a different request.",
}


IDEMPOTENCY_PARAMETER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Makes the POST safe to retry: for 24 hours the same key and body get the "
    "first answer again (Idempotent-Replayed: true); the same key with another body is 422.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
}


def _problem_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def add_problem_responses(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Every operation documents the problem responses it can give."""
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            problems = dict(PROBLEMS)
            if method != "get":
                problems.update(WRITE_PROBLEMS)
            if not path.startswith("/api/v1/"):
                continue
            if method == "post":
                operation.setdefault("parameters", []).append(IDEMPOTENCY_PARAMETER)
            responses = operation.setdefault("responses", {})
            for code, description in problems.items():
                responses.setdefault(code, _problem_response(description))
    return result


def add_links(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """OpenAPI links from each create, and from each list's first row, to what can be done
    with that object (its detail, actions and sub-resources), so a client (or schemathesis'
    stateful tests) can follow POST /requests/ -> GET /requests/{id}/ -> POST
    /requests/{id}/approve/, or GET /requests/ -> the first row's detail, and the like."""
    paths = result.get("paths", {})
    for collection, operations in paths.items():
        if "{" in collection:
            continue
        sources = []
        created = operations.get("post", {}).get("responses", {})
        if created.get("201"):
            sources.append((created["201"], "$response.body#/{}"))
        listed = operations.get("get", {}).get("responses", {}).get("200")
        if listed is not None and _paginated(listed, result):
            sources.append((listed, "$response.body#/results/0/{}"))
        for path, targets in paths.items():
            if not path.startswith(collection) or "{" not in path[len(collection) :]:
                continue
            parameter = path[len(collection) :].split("{", 1)[1].split("}", 1)[0]
            for method, operation in targets.items():
                if method not in {"get", "post", "put", "patch", "delete"}:
                    continue
                for answer, pointer in sources:
                    answer.setdefault("links", {})[operation["operationId"]] = {
                        "operationId": operation["operationId"],
                        "parameters": {parameter: pointer.format(parameter)},
                    }
    return result


def _paginated(answer: dict[str, Any], result: dict[str, Any]) -> bool:
    schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
    ref = schema.get("$ref", "")
    if ref:
        schema = result["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
    return "results" in schema.get("properties", {})


def strict_query_parameters(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Filters say what tenants.api.filters.StrictFilterBackend enforces: given once, never
    empty (leave a filter out to mean "any")."""
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method != "get":
                continue
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if (
                    parameter.get("in") == "query"
                    and schema.get("type") == "string"
                    and parameter.get("name") != "ordering"
                ):
                    schema.setdefault("minLength", 1)
    return result
