"""Patch formats: JSON merge patch (RFC 7386) and JSON patch (RFC 6902)."""

from __future__ import annotations

import copy
from typing import Any

from .errors import ApiError


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch; returns a new value and leaves ``target`` alone."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise ApiError(400, f"invalid JSON pointer: {path!r}")
    if not path:
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list, part: str, op: str, path: str, *, append: bool = False) -> int:
    if append and part == "-":
        return len(container)
    limit = len(container) if append else len(container) - 1
    if not part.isdigit() or not 0 <= int(part) <= limit:
        raise ApiError(422, f"jsonpatch {op} operation does not apply: index out of range: {path}")
    return int(part)


def _parent(doc: Any, parts: list[str], op: str, path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list):
            node = node[_index(node, part, op, path)]
        else:
            raise ApiError(
                422, f"jsonpatch {op} operation does not apply: doc is missing path: {path}"
            )
    return node


def _get(doc: Any, path: str, op: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent, last = _parent(doc, parts, op, path), parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, op, path)]
    raise ApiError(422, f"jsonpatch {op} operation does not apply: doc is missing path: {path}")


def _remove(doc: Any, path: str, op: str) -> Any:
    parts = _pointer(path)
    if not parts:
        raise ApiError(422, f"jsonpatch {op} operation does not apply: cannot remove the root")
    value = _get(doc, path, op)
    parent = _parent(doc, parts, op, path)
    if isinstance(parent, dict):
        del parent[parts[-1]]
    else:
        del parent[int(parts[-1])]
    return value


def _add(doc: Any, path: str, value: Any, op: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, op, path)
    if isinstance(parent, dict):
        parent[parts[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, parts[-1], op, path, append=True), value)
    else:
        raise ApiError(422, f"jsonpatch {op} operation does not apply: doc is missing path: {path}")
    return doc


def _replace(doc: Any, path: str, value: Any, op: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    _get(doc, path, op)  # the target must exist
    parent = _parent(doc, parts, op, path)
    parent[parts[-1] if isinstance(parent, dict) else int(parts[-1])] = value
    return doc


def json_patch(doc: Any, operations: Any) -> Any:
    """Apply RFC 6902 operations to a copy of ``doc``."""
    if not isinstance(operations, list):
        raise ApiError(400, "a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for operation in operations:
        if not isinstance(operation, dict) or "path" not in operation:
            raise ApiError(400, f"invalid JSON patch operation: {operation!r}")
        op, path = operation.get("op"), operation["path"]
        if op in ("add", "replace", "test") and "value" not in operation:
            raise ApiError(400, f"jsonpatch {op} operation requires a value")
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation["value"]), op)
        elif op == "remove":
            _remove(doc, path, op)
        elif op == "replace":
            doc = _replace(doc, path, copy.deepcopy(operation["value"]), op)
        elif op == "move":
            doc = _add(doc, path, _remove(doc, operation.get("from"), op), op)
        elif op == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, operation.get("from"), op)), op)
        elif op == "test":
            if _get(doc, path, op) != operation["value"]:
                raise ApiError(422, f"testing value {path} failed")
        else:
            raise ApiError(400, f"unknown JSON patch operation: {op!r}")
    return doc
