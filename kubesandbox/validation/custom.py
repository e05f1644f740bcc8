"""Custom resources against their CRD's structural ``openAPIV3Schema`` and its CEL rules."""

from __future__ import annotations

import re
from typing import Any

import jsonschema

from .. import celrules
from ..resources import ResourceType
from .common import Cause, dotted


def _to_json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: _to_json_schema(value)
        for key, value in node.items()
        if key not in ("nullable", "format", "x-kubernetes-validations", "default")
    }
    if node.get("x-kubernetes-int-or-string"):
        out.pop("anyOf", None)
        out["type"] = ["integer", "string"]
    if node.get("nullable") and "type" in out:
        out["type"] = [*(out["type"] if isinstance(out["type"], list) else [out["type"]]), "null"]
    if node.get("x-kubernetes-preserve-unknown-fields") and "type" not in node:
        out.pop("type", None)
    return out


def _custom_validator(rt: ResourceType, schema: dict) -> jsonschema.Draft4Validator:
    """One validator per served CRD version, kept on its type (rebuilt when the CRD is)."""
    if "validator" not in rt.cache:
        rt.cache["validator"] = jsonschema.Draft4Validator(_to_json_schema(schema))
    return rt.cache["validator"]


def _cr_cause(error: jsonschema.ValidationError) -> Cause:
    field = dotted(error.absolute_path)
    value = error.instance
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    if error.validator == "required":
        missing = re.search(r"'([^']+)' is a required property", error.message)
        name = missing[1] if missing else "?"
        return ("FieldValueRequired", f"{field}.{name}" if field else name, "Required value")
    if error.validator == "enum":
        allowed = ", ".join(f'"{v}"' for v in error.validator_value)
        return (
            "FieldValueNotSupported",
            field,
            f"Unsupported value: {shown}: supported values: {allowed}",
        )
    if error.validator == "type":
        wanted = error.validator_value
        wanted = [t for t in wanted if t != "null"] if isinstance(wanted, list) else [wanted]
        return (
            "FieldValueTypeInvalid",
            field,
            f"Invalid value: {shown}: {field} in body must be of type "
            f"{' or '.join(wanted)}: {shown}",
        )
    if error.validator == "pattern":
        return (
            "FieldValueInvalid",
            field,
            f"Invalid value: {shown}: {field} in body should match '{error.validator_value}'",
        )
    if error.validator in ("maxLength", "maxItems", "maxProperties"):
        return (
            "FieldValueTooLong",
            field,
            f"Too long: may not be more than {error.validator_value}",
        )
    if error.validator in ("minimum", "maximum", "minLength", "minItems"):
        relation = {
            "minimum": "greater than or equal to",
            "maximum": "less than or equal to",
            "minLength": "at least",
            "minItems": "at least",
        }[error.validator]
        return (
            "FieldValueInvalid",
            field,
            f"Invalid value: {shown}: {field} in body should be {relation} {error.validator_value}",
        )
    return ("FieldValueInvalid", field, f"Invalid value: {shown}: {error.message}")


def check_custom(rt: ResourceType, obj: dict, old: dict | None = None) -> list[Cause]:
    schema = dict(rt.schema or {})
    properties = dict(schema.get("properties") or {})
    for field in ("apiVersion", "kind", "metadata"):
        properties.pop(field, None)
    schema["properties"] = properties
    schema["required"] = [
        r for r in schema.get("required") or [] if r not in ("apiVersion", "kind", "metadata")
    ]
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    validator = _custom_validator(rt, schema)
    causes = [_cr_cause(error) for error in validator.iter_errors(body)]
    if not causes:  # as upstream, CEL rules run on objects that pass the schema
        old_body = {
            k: v for k, v in (old or {}).items() if k not in ("apiVersion", "kind", "metadata")
        }
        root_rules = {
            "x-kubernetes-validations": (rt.schema or {}).get("x-kubernetes-validations") or []
        }
        causes += celrules.rule_problems(obj, root_rules, "", old)
        for key, value in body.items():
            child = properties.get(key)
            if child is not None:
                causes += celrules.rule_problems(value, child, key, old_body.get(key))
    return causes
