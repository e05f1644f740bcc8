"""The parameters each GitLab operation of the stand-in takes, as GitLab's REST documentation
gives them, and their checking: a request naming one the operation does not take, missing a
required one or giving one of the wrong type is GitLab's 400 before any handler sees it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import ForgeError

STRING, INTEGER, BOOLEAN = str, int, bool
PAGING = {"page": INTEGER, "per_page": INTEGER}
Params = dict[str, type]


@dataclass(frozen=True)
class Operation:
    handler: Callable[[Any], tuple[int, Any, dict[str, str]]]
    required: Params
    optional: Params


CHOICES = {
    "state": ("opened", "closed", "merged", "locked", "all"),
    "state_event": ("close", "reopen"),
}


def arguments(operation: Operation, given: dict[str, Any]) -> dict[str, Any]:
    """The request's parameters as their declared types, or ForgeError 400 as GitLab's."""
    known = {**operation.required, **operation.optional}
    for name in operation.required:
        if given.get(name) in (None, ""):
            raise ForgeError(400, f"{name} is missing")
    parsed: dict[str, Any] = {}
    for name, value in given.items():
        kind = known.get(name)
        if kind is None:
            raise ForgeError(400, f"{name} is not a parameter of this operation")
        parsed[name] = _typed(name, kind, value)
        if name in CHOICES and parsed[name] not in CHOICES[name]:
            raise ForgeError(400, f"{name} does not have a valid value")
    return parsed


def _typed(name: str, kind: type, value: Any) -> Any:
    if kind is BOOLEAN:
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
    elif kind is INTEGER:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    elif isinstance(value, str):
        return value
    raise ForgeError(400, f"{name} is invalid")


def error_body(error: ForgeError) -> dict:
    if error.status == 400:
        return {"error": error.message}
    try:
        return {"message": json.loads(error.message)}
    except ValueError:
        return {"message": error.message}
