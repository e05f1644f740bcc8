"""Built-in kinds against the shipped Kubernetes 1.32 definitions (``openapi.definitions``)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jsonschema

from .. import openapi
from ..resources import ResourceType
from .common import QUANTITY_MESSAGE, Cause, decode_error, dotted, is_quantity
from .schemas import resolve


@functools.cache
def _shared_definitions() -> dict:
    defs = dict(openapi.definitions())
    # Quantity and IntOrString are Go structs with their own JSON decoding.
    defs[openapi.QUANTITY] = {"x-kubesandbox": "quantity"}
    defs[openapi.INT_OR_STRING] = {"type": ["string", "integer", "null"]}
    return defs


@functools.cache
def _builtin_validator(name: str) -> jsonschema.Draft202012Validator:
    # Every validator shares one copy of the definitions (they are megabytes).
    return jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{name}", "$defs": _shared_definitions()}
    )


_GO_TYPES = {
    "integer": "int",
    "number": "float64",
    "boolean": "bool",
    "string": "string",
    "object": "map[string]interface {}",
    "array": "[]interface {}",
}
_JSON_TYPES = {
    bool: "bool",
    int: "number",
    float: "number",
    str: "string",
    dict: "object",
    list: "array",
}


def _walk_quantities(value: Any, schema: dict, rt: ResourceType) -> None:
    schema = (
        resolve(schema)
        if "$ref" not in schema or not schema["$ref"].endswith(openapi.QUANTITY)
        else {"x-kubesandbox": "quantity"}
    )
    if schema.get("x-kubesandbox") == "quantity":
        if value is not None and not is_quantity(value):
            raise decode_error(rt, QUANTITY_MESSAGE)
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        if properties:
            for key, item in value.items():
                if key in properties:
                    _walk_quantities(item, properties[key], rt)
        elif isinstance(schema.get("additionalProperties"), dict):
            for item in value.values():
                _walk_quantities(item, schema["additionalProperties"], rt)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _walk_quantities(item, schema["items"], rt)


# Every stand-in starts by creating the same upstream CRDs, the largest objects it sees (a
# test suite starts hundreds of stand-ins): their check is remembered by their content.
_CHECKED_DEFINITIONS: dict[str, list[Cause]] = {}
_CHECKED_DEFINITIONS_KEPT = 256


def check_builtin(rt: ResourceType, obj: dict) -> list[Cause]:
    """Decoding errors raise 400 at once; missing required fields are returned as causes."""
    if rt.kind != "CustomResourceDefinition":
        return _check_builtin(rt, obj)
    content = json.dumps(obj, sort_keys=True, default=str)
    if content not in _CHECKED_DEFINITIONS:
        if len(_CHECKED_DEFINITIONS) >= _CHECKED_DEFINITIONS_KEPT:
            _CHECKED_DEFINITIONS.clear()
        _CHECKED_DEFINITIONS[content] = _check_builtin(rt, obj)
    return list(_CHECKED_DEFINITIONS[content])


def _check_builtin(rt: ResourceType, obj: dict) -> list[Cause]:
    name = openapi.definition_name(rt.group, rt.version, rt.kind)
    if not name:
        return []
    _walk_quantities(obj, {"$ref": f"#/$defs/{name}"}, rt)
    causes: list[Cause] = []
    for error in _builtin_validator(name).iter_errors(obj):
        field = dotted(error.absolute_path)
        if error.validator == "type":
            wanted = error.validator_value
            wanted = [t for t in wanted if t != "null"] if isinstance(wanted, list) else [wanted]
            go_type = error.schema.get("format") or _GO_TYPES.get(wanted[0], wanted[0])
            got = _JSON_TYPES.get(type(error.instance), "value")
            raise decode_error(
                rt, f"json: cannot unmarshal {got} into Go struct field {field} of type {go_type}"
            )
        if error.validator == "required":
            missing = re.search(r"'([^']+)' is a required property", error.message)
            if missing and _required_in_go(rt, error.schema, missing[1], field):
                path = f"{field}.{missing[1]}" if field else missing[1]
                causes.append(("FieldValueRequired", path, "Required value"))
    return causes


def _required_in_go(rt: ResourceType, parent: dict, name: str, field: str) -> bool:
    """OpenAPI marks every field without ``omitempty`` required, but Go decodes a missing
    struct as its zero value, which is often valid (a NetworkPolicy's podSelector). Only
    scalars and lists are held to it, plus the pointers Go validation requires."""
    path = f"{field}.{name}" if field else name
    if rt.group == "apps" and path == "spec.selector":
        return True
    child = resolve((parent.get("properties") or {}).get(name) or {})
    types = child.get("type") or []
    types = types if isinstance(types, list) else [types]
    return "object" not in types and "$ref" not in child
