"""Walking a schema: unknown fields, pruning and defaults (built-in and custom kinds)."""

from __future__ import annotations

import copy
from typing import Any

from .. import openapi
from .common import dotted


def resolve(schema: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = openapi.resolve(schema)
        if "$ref" in schema and schema.get("$ref", "").startswith("#/$defs/"):
            continue
        break
    return schema


def _is_open(schema: dict) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields"))


def prune(
    value: Any, schema: dict, path: tuple = (), *, root: bool = False, embedded: bool = False
) -> list[str]:
    """Drop fields ``schema`` does not declare (in place); returns their dotted paths."""
    schema = resolve(schema)
    unknown: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        if properties is None and isinstance(additional, dict):
            for key, item in value.items():
                unknown += prune(item, additional, (*path, key))
            return unknown
        if properties is None or _is_open(schema):
            for key, item in value.items():
                if properties and key in properties:
                    unknown += prune(item, properties[key], (*path, key))
            return unknown
        for key in list(value):
            if (root or embedded) and key in ("apiVersion", "kind"):
                continue
            if (root or embedded) and key == "metadata" and "metadata" not in properties:
                unknown += prune(
                    value[key], {"$ref": "#/$defs/" + openapi.OBJECT_META}, (*path, key)
                )
                continue
            if key not in properties:
                unknown.append(dotted((*path, key)))
                del value[key]
                continue
            child = properties[key]
            unknown += prune(
                value[key],
                child,
                (*path, key),
                embedded=bool(child.get("x-kubernetes-embedded-resource")),
            )
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            unknown += prune(item, schema["items"], (*path, index))
    return unknown


def apply_defaults(value: Any, schema: dict) -> None:
    """Structural defaulting of custom resources: fill in each absent field's ``default``."""
    if isinstance(value, dict):
        for key, child in (schema.get("properties") or {}).items():
            if key not in value and "default" in child:
                value[key] = copy.deepcopy(child["default"])
            if key in value:
                apply_defaults(value[key], child)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not schema.get("properties"):
            for item in value.values():
                apply_defaults(item, additional)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])
