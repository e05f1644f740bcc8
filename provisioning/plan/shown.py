"""What people and approvals see of a plan's objects: a Secret's values redacted to their
digests, and an object as an approval binds to it."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

REDACTED = "<redacted>"


def _redacted_value(value: str) -> str:
    digest = hashlib.sha256(value.encode()).hexdigest()[:16]
    return f"{REDACTED} sha256:{digest}"


def redact_secret(obj: dict[str, Any]) -> dict[str, Any]:
    """A Secret as people may see it: each value replaced by `<redacted>` and the first 16
    hex of its SHA-256, so a changed credential shows as changed and nothing more."""
    if obj.get("kind") != "Secret" or obj.get("apiVersion") != "v1":
        return obj
    shown = copy.deepcopy(obj)
    for section in ("data", "stringData"):
        if isinstance(shown.get(section), dict):
            shown[section] = {
                key: _redacted_value(str(value)) for key, value in shown[section].items()
            }
    return shown


def bound_object(obj: dict[str, Any], *, own_namespaces: set[str], unbound: str) -> dict[str, Any]:
    """An object (redacted already) as an approval binds to it: without the annotation
    `unbound` (a grant's end: an approver approves its duration, its end follows from the
    moment of approval), and an AppProject with its destinations only for `own_namespaces`,
    those the plan makes (the others follow the tenant's records: another request's
    namespace made between approval and run does not move this plan)."""
    annotations = obj["metadata"].get("annotations") or {}
    if unbound in annotations:
        obj = copy.deepcopy(obj)
        del obj["metadata"]["annotations"][unbound]
    if obj["kind"] != "AppProject":
        return obj
    spec = dict(obj.get("spec") or {})
    for field_name in ("destinations", "destinationServiceAccounts"):
        if field_name in spec:
            spec[field_name] = [d for d in spec[field_name] if d.get("namespace") in own_namespaces]
    return {**obj, "spec": spec}
