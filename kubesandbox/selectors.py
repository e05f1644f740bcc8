"""Label and field selectors for LIST, in the string syntax of ``?labelSelector=``."""

from __future__ import annotations

import re
from collections.abc import Callable

from .errors import ApiError

Predicate = Callable[[dict], bool]

_KEY = r"[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"[A-Za-z0-9_.-]*"
_EXISTS = re.compile(rf"^({_KEY})$")
_NOT_EXISTS = re.compile(rf"^!\s*({_KEY})$")
_EQUALITY = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*({_VALUE})$")
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s*\(([^()]*)\)$")


def _split(selector: str) -> list[str]:
    """Split on commas that are not inside an ``in (...)`` value list."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def _requirement(text: str) -> Predicate:
    if match := _NOT_EXISTS.match(text):
        key = match[1]
        return lambda labels: key not in labels
    if match := _EQUALITY.match(text):
        key, op, value = match[1], match[2], match[3]
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if match := _SET.match(text):
        key, op = match[1], match[2]
        values = {v.strip() for v in match[3].split(",") if v.strip()}
        if not values or not all(re.fullmatch(_VALUE, v) for v in values):
            raise ApiError(400, f"unable to parse requirement: invalid value list in {text!r}")
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if match := _EXISTS.match(text):
        key = match[1]
        return lambda labels: key in labels
    raise ApiError(400, f"unable to parse requirement: {text!r}")


def label_selector(selector: str | None) -> Predicate:
    """Compile a label selector; requirements separated by commas must all hold."""
    requirements = [_requirement(part) for part in _split(selector or "")]

    def matches(obj: dict) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(requirement(labels) for requirement in requirements)

    return matches


# Beyond metadata.name and metadata.namespace, the field labels each kind supports upstream.
EXTRA_FIELDS: dict[str, tuple[str, ...]] = {
    "Pod": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "Event": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "Secret": ("type",),
    "Namespace": ("status.phase",),
    "ReplicaSet": ("status.replicas",),
    "Job": ("status.successful",),
}
_FIELD_TERM = re.compile(r"^([A-Za-z.]+)\s*(==|=|!=)\s*(.*)$")


def _field_value(obj: dict, path: str) -> str:
    node: object = obj
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, bool):
        return "true" if node else "false"
    return "" if node is None else str(node)


def field_selector(selector: str | None, kind: str = "") -> Predicate:
    """Compile a field selector: metadata.name, metadata.namespace and the kind's own field
    labels (``EXTRA_FIELDS``); anything else is 400, as upstream."""
    known = {"metadata.name", "metadata.namespace", *EXTRA_FIELDS.get(kind, ())}
    terms = []
    for part in _split(selector or ""):
        match = _FIELD_TERM.match(part)
        if not match:
            raise ApiError(400, f"invalid field selector: {part!r}")
        if match[1] not in known:
            raise ApiError(400, f"field label not supported: {match[1]}")
        terms.append((match[1], match[2] == "!=", match[3].strip()))

    def matches(obj: dict) -> bool:
        return all((_field_value(obj, path) == value) != negate for path, negate, value in terms)

    return matches


def matches_label_selector(selector: dict | None, labels: dict | None) -> bool:
    """A ``metav1.LabelSelector`` (matchLabels, matchExpressions); an empty one matches all."""
    selector = selector or {}
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key"), expression.get("operator")
        values = expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True
