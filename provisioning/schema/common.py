"""What the built-in and the custom-resource checks share: field paths, JSON types, metadata
rules and the YAML reader.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml


@dataclass(frozen=True)
class SchemaError:
    """One problem found in an object. ``path`` is a JSON path such as
    ``spec.egress[0].ports[0].port`` or ``metadata.labels["app.kubernetes.io/name"]``
    ("" for the object as a whole)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class SchemaUnavailable(Exception):
    """The schema needed to validate an object cannot be loaded (e.g. no CRD directory)."""


RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
INT64 = (-(2**63), 2**63 - 1)
INT32 = (-(2**31), 2**31 - 1)
# The only way Berth finds the upstream CRDs: an installation has no folder of them by default.
CRD_DIR_ENV = "BERTH_CRD_DIR"


def yaml_documents(stream: Any) -> list[Any]:
    """Safe-load every YAML document (libyaml's C loader when available: ~10x faster)."""
    if hasattr(yaml, "CSafeLoader"):
        return list(yaml.load_all(stream, Loader=yaml.CSafeLoader))
    return list(yaml.safe_load_all(stream))


API_VERSION = re.compile(
    r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?"
)
_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def format_path(parts: Iterable[str | int]) -> str:
    path = ""
    for part in parts:
        path = join_path(path, part)
    return path


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def object_key(obj: Any, index: int) -> str:
    if not isinstance(obj, Mapping):
        return f"#{index}"
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "?"
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else f"#{index}"
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        return f"{kind}/{namespace}/{name}"
    return f"{kind}/{name}"


def check_metadata_rules(
    obj: Mapping[str, Any], namespaced: bool, kind: str, errors: list[SchemaError]
) -> None:
    metadata = obj.get("metadata")
    if metadata is None:
        if "metadata" not in obj:
            errors.append(SchemaError("metadata", "required field is missing"))
        return
    if not isinstance(metadata, Mapping):
        return  # already reported as a type error
    name = metadata.get("name")
    if "name" not in metadata or name == "":
        errors.append(
            SchemaError(
                "metadata.name",
                "required field is missing (objects are "
                "applied by name; generateName is not enough)",
            )
        )
    if not namespaced and metadata.get("namespace") not in (None, ""):
        errors.append(
            SchemaError("metadata.namespace", f"must not be set: {kind} is cluster-scoped")
        )
