"""The one comparison of a desired object with what the cluster holds: `object_finding`
(missing, changed where, or None), on the fields Berth sets. It serves the reconcile of a
key (provisioning.reconcile), the watcher (through `digest_in`, a digest of the same fields,
then `object_finding` to confirm), the truth table and the guardrails' check. Pure."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from provisioning.plan.model import LABEL_REQUEST, ref_of


def differences(desired: Any, live: Any, path: str = "") -> list[str]:
    """Where live differs from desired, looking only at what Berth sets."""
    if isinstance(desired, dict):
        if not isinstance(live, dict):
            return [path or "."]
        found = []
        for key, value in desired.items():
            found += differences(value, live.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(desired, list):
        if not isinstance(live, list) or len(live) != len(desired):
            return [path]
        found = []
        for index, (want, have) in enumerate(zip(desired, live, strict=True)):
            found += differences(want, have, f"{path}[{index}]")
        return found
    return [] if desired == live or str(desired) == str(live) else [path]


def compared_fields(desired: dict[str, Any]) -> dict[str, Any]:
    """What of a desired object drift looks at: all Berth sets but its metadata, and its
    labels (which request last applied an object is bookkeeping, not drift)."""
    labels = {k: v for k, v in desired["metadata"].get("labels", {}).items() if k != LABEL_REQUEST}
    return {**{k: v for k, v in desired.items() if k != "metadata"}, "metadata": {"labels": labels}}


def object_finding(desired: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any] | None:
    """ONE object against its desired form: missing, changed (where), or None when it
    matches. The periodic reconcile and the watcher both ask this."""
    ref = str(ref_of(desired))
    if live is None:
        return {"object": ref, "status": "missing", "detail": ""}
    live = {**live, "metadata": {"labels": (live.get("metadata") or {}).get("labels") or {}}}
    changed = differences(compared_fields(desired), live)
    if changed:
        return {"object": ref, "status": "changed", "detail": ", ".join(sorted(changed))}
    return None


# A digest of the fields Berth sets, so a watcher holds a few bytes per object rather than
# objects: the desired object's shape (its keys, the length of its lists) is walked in the
# live one, and the values found there are hashed. Shapes repeat from namespace to namespace
# and are kept once (`planned_digests`).
_MISMATCH = "\x00shape"


def shape_of(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: shape_of(each) for key, each in value.items()}
    if isinstance(value, list):
        return [shape_of(each) for each in value]
    return None


def _project(shape: Any, value: Any) -> Any:
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return _MISMATCH
        return {key: _project(each, value.get(key)) for key, each in shape.items()}
    if isinstance(shape, list):
        if not isinstance(value, list) or len(value) != len(shape):
            return _MISMATCH
        return [_project(want, have) for want, have in zip(shape, value, strict=True)]
    return str(value)  # as `differences` does: "1" and 1 are the same quantity


def digest_in(shape: Any, obj: dict[str, Any]) -> bytes:
    """The digest of what `obj` holds where the shape (of a desired object's compared
    fields) has values; equal to the desired object's own digest when nothing drifted."""
    projected = _project(
        shape, {**obj, "metadata": {"labels": (obj.get("metadata") or {}).get("labels") or {}}}
    )
    text = json.dumps(projected, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def planned_digests(
    desired: list[dict[str, Any]], shapes: dict[str, Any]
) -> dict[tuple[str, str], tuple[Any, bytes]]:
    """(kind, name) -> (shape, digest) of a namespace's desired objects, as a watcher keeps
    them for every namespace: shapes shared through `shapes`, kinds and names interned."""
    digests = {}
    for obj in desired:
        shape = shape_of(
            {
                **{k: v for k, v in obj.items() if k != "metadata"},
                "metadata": {"labels": obj["metadata"].get("labels", {})},
            }
        )
        shape = shapes.setdefault(json.dumps(shape, sort_keys=True), shape)
        key = (sys.intern(obj["kind"]), sys.intern(obj["metadata"]["name"]))
        digests[key] = (shape, digest_in(shape, obj))
    return digests


def unexpected(api_version: str, kind: str, live: dict[str, Any]) -> dict[str, Any]:
    ref = ref_of({**live, "apiVersion": api_version, "kind": kind})
    return {"object": str(ref), "status": "unexpected", "detail": ""}
