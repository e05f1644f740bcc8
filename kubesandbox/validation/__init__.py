"""Validation as the apiserver does it: decoding (types, quantities, unknown fields per
``fieldValidation``), pruning and defaulting of custom resources, schema checks (required
fields, CRD ``openAPIV3Schema`` rules), and the hand-written checks of some built-in kinds
(names, labels, RBAC ``roleRef``, immutable fields).

Built-in kinds are checked against the Kubernetes 1.32 definitions (``openapi.definitions``)
with ``jsonschema``; custom resources against their CRD's structural schema.
"""

from __future__ import annotations

from .. import openapi
from ..errors import ApiError, invalid
from ..names import name_problems, string_map_problems
from ..resources import ResourceType
from .builtin import check_builtin
from .common import IGNORE, STRICT, WARN, Cause, decode_error
from .custom import check_custom
from .kinds import kind_problems
from .schemas import apply_defaults, prune

__all__ = ["IGNORE", "STRICT", "WARN", "decode", "validate"]


def decode(rt: ResourceType, obj: dict, field_validation: str) -> list[str]:
    """What decoding a request body does: drop unknown fields (refusing them under Strict),
    default custom resources. Returns the warnings to send back."""
    if field_validation not in (STRICT, WARN, IGNORE):
        raise ApiError(
            400,
            f'fieldValidation must be one of "Ignore", "Warn" or "Strict", not '
            f'"{field_validation}"',
        )
    if rt.custom:
        schema = rt.schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    else:
        name = openapi.definition_name(rt.group, rt.version, rt.kind)
        if not name:
            return []
        schema = {"$ref": f"#/$defs/{name}"}
    unknown = prune(obj, schema, root=True)
    if unknown and field_validation == STRICT:
        listed = ", ".join(f'unknown field "{path}"' for path in unknown)
        raise decode_error(rt, f"strict decoding error: {listed}")
    if rt.custom and rt.schema:
        apply_defaults(obj, rt.schema)
    if field_validation == WARN:
        return [f'unknown field "{path}"' for path in unknown]
    return []


def validate(rt: ResourceType, obj: dict, old: dict | None = None) -> None:
    """Raise 422 Invalid (or 400 for what would not decode) as the real apiserver would."""
    metadata = obj["metadata"]
    name = metadata.get("name") or ""
    if not isinstance(name, str):
        raise ApiError(400, "metadata.name must be a string")
    problems: list[Cause] = []
    if not name:
        problems.append(
            (
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required",
            )
        )
    else:
        problems += name_problems(rt.name_rule, name)
    problems += string_map_problems("metadata.labels", metadata.get("labels"), labels=True)
    problems += string_map_problems(
        "metadata.annotations", metadata.get("annotations"), labels=False
    )
    if rt.custom:
        problems += check_custom(rt, obj, old)
    else:
        problems += check_builtin(rt, obj)
        problems += kind_problems(rt, obj, old)
    if problems:
        raise invalid(rt, name, _unique(problems))


def _unique(causes: list[Cause]) -> list[Cause]:
    seen, out = set(), []
    for cause in causes:
        if cause not in seen:
            seen.add(cause)
            out.append(cause)
    return out
