"""CEL validation rules in CRD schemas (``x-kubernetes-validations``), evaluated like the
apiextensions apiserver: ``self`` is the node, ``oldSelf`` the same node before an update
(rules that use it are transition rules, skipped on create), ``message`` or
``messageExpression`` is the answer, ``fieldPath`` refines where it is reported."""

from __future__ import annotations

from typing import Any

import celpy

from .celenv import EvalError, evaluate

Cause = tuple[str, str, str]
_TYPE_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
}


def _path(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key


def rule_problems(value: Any, schema: dict, path: str = "", old: Any = None) -> list[Cause]:
    if value is None or not isinstance(schema, dict):
        return []
    problems: list[Cause] = []
    for rule in schema.get("x-kubernetes-validations") or []:
        expression = rule.get("rule", "")
        if "oldSelf" in expression and old is None:
            continue  # a transition rule: only updates have an old value
        activation = celpy.json_to_cel({"self": value, "oldSelf": old})
        where = path + (rule.get("fieldPath") or "")
        try:
            result = evaluate(expression, activation)
        except EvalError as error:
            problems.append(
                (
                    "FieldValueInvalid",
                    where,
                    f"Invalid value: "
                    f'"{_TYPE_NAMES.get(type(value), "value")}": rule compile or '
                    f"evaluation error: {error}",
                )
            )
            continue
        if isinstance(result, celpy.celtypes.BoolType) and bool(result):
            continue
        message = rule.get("message") or f"failed rule: {expression}"
        if rule.get("messageExpression"):
            try:
                produced = evaluate(rule["messageExpression"], activation)
                if isinstance(produced, str) and produced.strip():
                    message = produced
            except EvalError:
                pass
        reason = rule.get("reason") or "FieldValueInvalid"
        shown = _TYPE_NAMES.get(type(value), "value")
        problems.append((reason, where, f'Invalid value: "{shown}": {message}'))
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            child = (
                properties.get(key)
                if properties
                else (additional if isinstance(additional, dict) else None)
            )
            if child is not None:
                old_item = old.get(key) if isinstance(old, dict) else None
                problems += rule_problems(item, child, _path(path, key), old_item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problems += rule_problems(item, schema["items"], _path(path, index))
    return problems
