"""Field ownership (``metadata.managedFields``), the bookkeeping behind server-side apply.

A field is a path of map keys down to a scalar, a list (lists are atomic here, the real
server merges some lists by key) or an empty map. Each (manager, operation, subresource)
owns a set of such paths, stored in the real ``FieldsV1`` shape (``{"f:data": {"f:k": {}}}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Path = tuple[str, ...]
OwnerKey = tuple[str, str, str]  # (manager, operation, subresource)
Owners = dict[OwnerKey, set[Path]]

MISSING: Any = object()

# Identity and server-set metadata are never owned by anyone.
_UNOWNED_METADATA = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)


def leaf_paths(obj: dict | None) -> set[Path]:
    paths: set[Path] = set()

    def walk(node: dict, prefix: Path) -> None:
        for key, value in node.items():
            if prefix == () and key in ("apiVersion", "kind"):
                continue
            if prefix == ("metadata",) and key in _UNOWNED_METADATA:
                continue
            if isinstance(value, dict) and value:
                walk(value, (*prefix, key))
            else:
                paths.add((*prefix, key))

    walk(obj or {}, ())
    return paths


def lookup(obj: Any, path: Path) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return MISSING
        obj = obj[key]
    return obj


def remove(obj: dict, path: Path) -> None:
    """Delete ``path`` and the maps that deleting it leaves empty."""
    parents = []
    node = obj
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            return
        parents.append((node, key))
        node = node[key]
    node.pop(path[-1], None)
    for parent, key in reversed(parents):
        if parent[key]:
            break
        del parent[key]


def _encode(paths: Iterable[Path]) -> dict:
    tree: dict = {}
    for path in sorted(paths):
        node = tree
        for key in path:
            node = node.setdefault(f"f:{key}", {})
    return tree


def _decode(tree: dict | None) -> set[Path]:
    paths: set[Path] = set()

    def walk(node: dict, prefix: Path) -> None:
        for key, child in node.items():
            if key.startswith("f:"):
                if child:
                    walk(child, (*prefix, key[2:]))
                else:
                    paths.add((*prefix, key[2:]))

    walk(tree or {}, ())
    return paths


def _key(entry: dict) -> OwnerKey:
    return (entry.get("manager", ""), entry.get("operation", ""), entry.get("subresource", ""))


def owners_of(obj: dict | None) -> Owners:
    entries = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return {_key(entry): _decode(entry.get("fieldsV1")) for entry in entries}


def dotted(path: Path) -> str:
    return "".join(f".{key}" for key in path)


def apply_conflicts(
    owners: Owners, own: OwnerKey, applied: set[Path], existing: dict, config: dict
) -> list[tuple[OwnerKey, Path]]:
    """Fields another manager owns that this apply would set to a different value."""
    return [
        (key, path)
        for key, paths in owners.items()
        if key != own
        for path in sorted(applied & paths)
        if lookup(existing, path) != lookup(config, path)
    ]


def record_update(owners: Owners, own: OwnerKey, old: dict | None, new: dict) -> None:
    """A non-apply write takes over every field it changed, from whoever owned it."""
    changed = {path for path in leaf_paths(new) if lookup(old, path) != lookup(new, path)}
    for key in owners:
        owners[key] -= changed
    owners[own] = owners.get(own, set()) | changed


def managed_fields(
    owners: Owners, obj: dict, previous: list[dict], api_version: str, now: str
) -> list[dict]:
    """Render ``owners`` as managedFields entries, keeping untouched entries (and their time)."""
    kept = {_key(entry): entry for entry in previous}
    entries = []
    for key, paths in owners.items():
        # Only fields that exist can be owned (e.g. a Secret's stringData never does).
        paths = {path for path in paths if lookup(obj, path) is not MISSING}
        if not paths:
            continue
        old = kept.get(key)
        if old is not None and _decode(old.get("fieldsV1")) == paths:
            entries.append(old)
            continue
        manager, operation, subresource = key
        entry = {
            "manager": manager,
            "operation": operation,
            "apiVersion": api_version,
            "time": now,
            "fieldsType": "FieldsV1",
            "fieldsV1": _encode(paths),
        }
        if subresource:
            entry["subresource"] = subresource
        entries.append(entry)
    return entries
