"""Validation as the apiserver does it: decoding (types, quantities, unknown fields per
``fieldValidation``), pruning and defaulting of custom resources, schema checks (required
fields, CRD ``openAPIV3Schema`` rules), and the hand-written checks of some built-in kinds
(names, labels, RBAC ``roleRef``, immutable fields).

Built-in kinds are checked against the Kubernetes 1.32 definitions (``openapi.definitions``)
with ``jsonschema``; custom resources against their CRD's structural schema.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

import jsonschema

from . import celrules, crds, openapi
from .errors import ApiError, invalid
from .names import name_problems, string_map_problems
from .resources import NAME_PATH_SEGMENT, RBAC, ResourceType

Cause = tuple[str, str, str]
STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"

# What Go's resource.ParseQuantity accepts, and the words of its error.
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$")
QUANTITY_MESSAGE = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def is_quantity(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and bool(_QUANTITY.match(value))


def _dotted(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def decode_error(rt: ResourceType, message: str) -> ApiError:
    return ApiError(
        400, f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {message}'
    )


# -- walking a schema: unknown fields, pruning, defaults ------------------------------------


def _resolve(schema: dict) -> dict:
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
    schema = _resolve(schema)
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
                unknown.append(_dotted((*path, key)))
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


# -- built-in kinds: the shipped definitions -------------------------------------------------


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
        _resolve(schema)
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


def check_builtin(rt: ResourceType, obj: dict) -> list[Cause]:
    """Decoding errors raise 400 at once; missing required fields are returned as causes."""
    name = openapi.definition_name(rt.group, rt.version, rt.kind)
    if not name:
        return []
    _walk_quantities(obj, {"$ref": f"#/$defs/{name}"}, rt)
    causes: list[Cause] = []
    for error in _builtin_validator(name).iter_errors(obj):
        field = _dotted(error.absolute_path)
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
    child = _resolve((parent.get("properties") or {}).get(name) or {})
    types = child.get("type") or []
    types = types if isinstance(types, list) else [types]
    return "object" not in types and "$ref" not in child


# -- custom resources: the CRD's structural schema -------------------------------------------


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
    field = _dotted(error.absolute_path)
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


# -- the entry point -------------------------------------------------------------------------


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


# -- hand-written checks of built-in kinds (Go validation upstream) --------------------------


def _go_role_ref(ref: dict) -> str:
    return (
        f'v1.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", '
        f'Name:"{ref.get("name", "")}"}}'
    )


def _rbac_problems(rt: ResourceType, obj: dict, old: dict | None) -> list[Cause]:
    problems: list[Cause] = []
    if rt.kind in ("RoleBinding", "ClusterRoleBinding"):
        ref = obj.get("roleRef") or {}
        kinds = ("Role", "ClusterRole") if rt.kind == "RoleBinding" else ("ClusterRole",)
        if ref.get("apiGroup") != RBAC:
            problems.append(
                (
                    "FieldValueNotSupported",
                    "roleRef.apiGroup",
                    f'Unsupported value: "{ref.get("apiGroup", "")}": supported values: "{RBAC}"',
                )
            )
        if ref.get("kind") not in kinds:
            supported = ", ".join(f'"{k}"' for k in kinds)
            problems.append(
                (
                    "FieldValueNotSupported",
                    "roleRef.kind",
                    f'Unsupported value: "{ref.get("kind", "")}": supported values: {supported}',
                )
            )
        if not ref.get("name"):
            problems.append(("FieldValueRequired", "roleRef.name", "Required value"))
        else:
            problems += name_problems(NAME_PATH_SEGMENT, ref["name"], "roleRef.name")
        for index, subject in enumerate(obj.get("subjects") or []):
            where = f"subjects[{index}]"
            kind = subject.get("kind", "")
            if kind not in ("ServiceAccount", "User", "Group"):
                problems.append(
                    (
                        "FieldValueNotSupported",
                        f"{where}.kind",
                        f'Unsupported value: "{kind}": supported values: '
                        '"ServiceAccount", "User", "Group"',
                    )
                )
            if (
                kind == "ServiceAccount"
                and rt.kind == "ClusterRoleBinding"
                and not subject.get("namespace")
            ):
                problems.append(("FieldValueRequired", f"{where}.namespace", "Required value"))
        if old is not None and (old.get("roleRef") or {}) != ref:
            problems.append(
                (
                    "FieldValueInvalid",
                    "roleRef",
                    f"Invalid value: {_go_role_ref(ref)}: cannot change roleRef",
                )
            )
    elif rt.kind in ("Role", "ClusterRole"):
        for index, rule in enumerate(obj.get("rules") or []):
            where = f"rules[{index}]"
            if not rule.get("verbs"):
                problems.append(
                    (
                        "FieldValueRequired",
                        f"{where}.verbs",
                        "Required value: verbs must contain at least one value",
                    )
                )
            if rule.get("nonResourceURLs"):
                if rt.kind == "Role":
                    problems.append(
                        (
                            "FieldValueInvalid",
                            f"{where}.nonResourceURLs",
                            "Invalid value: ...: namespaced rules cannot apply to "
                            "non-resource URLs",
                        )
                    )
                if rule.get("resources") or rule.get("apiGroups"):
                    problems.append(
                        (
                            "FieldValueInvalid",
                            f"{where}.nonResourceURLs",
                            "Invalid value: ...: rules cannot apply to both regular "
                            "resources and non-resource URLs",
                        )
                    )
            elif not rule.get("apiGroups"):
                problems.append(
                    (
                        "FieldValueRequired",
                        f"{where}.apiGroups",
                        "Required value: resource rules must supply at least one api group",
                    )
                )
            elif not rule.get("resources"):
                problems.append(
                    (
                        "FieldValueRequired",
                        f"{where}.resources",
                        "Required value: resource rules must supply at least one resource",
                    )
                )
    return problems


_SELECTOR_IMMUTABLE = {
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
}


def kind_problems(rt: ResourceType, obj: dict, old: dict | None) -> list[Cause]:
    problems: list[Cause] = []
    if rt.group == RBAC:
        problems += _rbac_problems(rt, obj, old)
    if crds.is_crd(rt):
        problems += crds.crd_problems(obj)
    if rt.kind == "ResourceQuota":
        for key in (obj.get("spec") or {}).get("hard") or {}:
            if not re.fullmatch(r"([a-z0-9.-]+/)?[a-z0-9A-Z.-]+", str(key)):
                problems.append(
                    (
                        "FieldValueInvalid",
                        f"spec.hard[{key}]",
                        f'Invalid value: "{key}": must be a standard resource type or '
                        "fully qualified",
                    )
                )
    if old is None:
        return problems
    if (rt.group, rt.kind) in _SELECTOR_IMMUTABLE and (
        (obj.get("spec") or {}).get("selector") != (old.get("spec") or {}).get("selector")
    ):
        problems.append(
            ("FieldValueInvalid", "spec.selector", "Invalid value: ...: field is immutable")
        )
    if rt.group == "" and rt.kind in ("ConfigMap", "Secret") and old.get("immutable"):
        for field in ("data", "binaryData", "stringData"):
            if obj.get(field) != old.get(field):
                problems.append(
                    (
                        "FieldForbidden",
                        field,
                        "Forbidden: field is immutable when `immutable` is set",
                    )
                )
    if rt.kind == "Secret" and rt.group == "" and obj.get("type") != old.get("type"):
        problems.append(
            ("FieldValueInvalid", "type", f'Invalid value: "{obj.get("type")}": field is immutable')
        )
    return problems
