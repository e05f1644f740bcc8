"""What every write shares: constants, the write context, and the pure steps (key, prepare,
normalise) of turning a request body into a stored object."""

from __future__ import annotations

import base64
import binascii
import copy
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import ApiError, bad_request
from .resources import NAMESPACES, ResourceType
from .validation import WARN

# Every real cluster has these; code under test may rely on "default" existing.
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

# Set by the server on every write; whatever a client sends here is ignored.
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "managedFields",
    "selfLink",
)

Key = tuple[str, str, str, str]  # (group, plural, namespace, name)
# The NamespaceLifecycle admission plugin refuses to delete these.
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass
class WriteContext:
    """Who writes, how unknown fields are treated, and the warnings to send back."""

    user: Any = None  # authn.UserInfo; None for the Python API (seeding, upsert)
    field_validation: str = WARN
    warnings: list[str] = dataclasses.field(default_factory=list)
    subresource: str = ""
    dry_run: bool = False


# (operation, type, new object, old object, context) -> raises ApiError to refuse.
AdmissionHook = Callable[[str, ResourceType, dict | None, dict | None, WriteContext], None]


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_key(rt: ResourceType, namespace: str | None, name: str) -> Key:
    return (rt.group, rt.plural, namespace or "", name)


def without(obj: dict, *top_level: str) -> dict:
    return {k: v for k, v in obj.items() if k not in top_level}


def immutable(error: ApiError) -> bool:
    causes = (error.details or {}).get("causes") or []
    return error.code == 422 and any(
        "immutable" in c.get("message", "") or "cannot change" in c.get("message", "")
        for c in causes
    )


def as_version(rt: ResourceType, obj: dict) -> dict:
    """A copy as the requested version (custom resources: conversion strategy None)."""
    copied = copy.deepcopy(obj)
    if rt.custom:
        copied["apiVersion"] = rt.api_version
    return copied


def comparable(obj: dict) -> dict:
    """The object minus its resourceVersion: equal means the write was a no-op."""
    result = dict(obj)
    result["metadata"] = without(obj["metadata"], "resourceVersion")
    return result


def prepare(rt: ResourceType, namespace: str | None, body: object, *, url_name: str | None) -> dict:
    """Check a request body against the URL and fill in apiVersion, kind and namespace."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON or YAML object")
    obj = copy.deepcopy(body)
    for field, expected in (("apiVersion", rt.api_version), ("kind", rt.kind)):
        sent = obj.setdefault(field, expected)
        if sent != expected:
            raise bad_request(
                f"the {field} in the data ({sent}) does not match the expected {field} ({expected})"
            )
    metadata = obj.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise bad_request("metadata must be an object")
    if url_name is not None:
        metadata.setdefault("name", url_name)
        if metadata["name"] != url_name:
            raise bad_request(
                f"the name of the object ({metadata['name']}) does not match the name on "
                f"the URL ({url_name})"
            )
    if rt.namespaced:
        if metadata.setdefault("namespace", namespace) != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
    else:
        # The real server silently drops a namespace on cluster-scoped objects.
        metadata.pop("namespace", None)
    return obj


def normalise(rt: ResourceType, obj: dict) -> None:
    """Server-side defaulting that code under test is likely to read back."""
    if rt.kind == "Secret":
        string_data = obj.pop("stringData", None) or {}
        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        if not data:
            del obj["data"]
        obj.setdefault("type", "Opaque")
    elif rt is NAMESPACES:
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    metadata = obj["metadata"]
    for field in ("labels", "annotations", "finalizers", "ownerReferences"):
        if field in metadata and not metadata[field]:
            del metadata[field]  # Go's omitempty: an emptied map or list is not written back


def list_page(rt: ResourceType, items: list[dict], version: int, remaining: int) -> dict:
    """A ``<Kind>List`` page; with objects left after it, the token where the next starts,
    which carries the listing's version: as a real API server's, it ages out when the
    history behind that version is compacted."""
    metadata: dict = {"resourceVersion": str(version)}
    if remaining:
        last = items[-1]["metadata"]
        token = json.dumps([last.get("namespace", ""), last["name"], version])
        metadata["continue"] = base64.urlsafe_b64encode(token.encode()).decode()
        metadata["remainingItemCount"] = remaining
    return {
        "kind": f"{rt.kind}List",
        "apiVersion": rt.api_version,
        "metadata": metadata,
        "items": items,
    }


def decode_continue(token: str | None) -> tuple[tuple[str, str], int | None]:
    """Where the page after starts (namespace, name), and the listing's version."""
    if not token:
        return ("", ""), None
    try:
        namespace, name, resource_version = json.loads(base64.urlsafe_b64decode(token.encode()))
        resource_version = int(resource_version)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise bad_request(f"invalid continue token: {exc}") from exc
    return (str(namespace), str(name)), resource_version
