"""Custom resources, checked against the upstream CRDs' openAPIV3Schema with jsonschema,
after translating the structural-schema dialect (see the package's docstring).
"""

from __future__ import annotations

import copy
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from provisioning.schema.common import (
    CRD_DIR_ENV,
    INT32,
    INT64,
    RFC3339,
    SchemaError,
    SchemaUnavailable,
    format_path,
    is_base64,
    is_int,
    join_path,
    json_type,
    yaml_documents,
)


def crd_dir_candidate(crd_dir: str | os.PathLike[str] | None) -> tuple[Path | None, str]:
    """The CRD directory asked for, and by what: the argument, else ``$BERTH_CRD_DIR``; no
    directory when neither names one (nothing is looked for elsewhere)."""
    if crd_dir is not None:
        return Path(crd_dir), "crd_dir argument"
    from_env = os.environ.get(CRD_DIR_ENV)
    if from_env:
        return Path(from_env), f"${CRD_DIR_ENV}"
    return None, f"${CRD_DIR_ENV} is not set"


def require_crd_dir(crd_dir: str | os.PathLike[str] | None, api_version: str, kind: str) -> Path:
    path, source = crd_dir_candidate(crd_dir)
    if path is None:
        raise SchemaUnavailable(
            f"cannot validate {kind} ({api_version}): it is not a built-in kind and no CRD "
            f"directory is configured ({source}); set {CRD_DIR_ENV} or pass crd_dir"
        )
    if not path.is_dir():
        raise SchemaUnavailable(
            f"cannot validate {kind} ({api_version}): it is not a built-in kind and the CRD "
            f"directory {path} ({source}) does not exist; set {CRD_DIR_ENV} or pass crd_dir"
        )
    return path.resolve()


def _crd_key(doc: Any) -> tuple[str, str] | None:
    if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
        return None
    spec = doc.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("names"), dict):
        return None
    group, kind = spec.get("group"), spec["names"].get("kind")
    return (group, kind) if isinstance(group, str) and isinstance(kind, str) else None


def _load_yaml_documents(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as stream:
        return yaml_documents(stream)


def _crd_keys_in_file(path: Path) -> list[tuple[str, str]]:
    """(group, kind) of every CRD in a file. For a single-document file only the part before
    ``spec.versions`` (group, names, scope) is parsed, so big CRDs are not loaded to be indexed."""
    text = path.read_text(encoding="utf-8")
    markers = len(re.findall(r"(?m)^---", text))
    if markers <= (1 if text.lstrip().startswith("---") else 0):
        versions = re.search(r"(?m)^  versions:", text)
        if versions:
            try:
                head = yaml_documents(text[: versions.start()])[0]
            except yaml.YAMLError:
                head = None
            key = _crd_key(head)
            if key:
                return [key]
    return [key for doc in _load_yaml_documents(path) if (key := _crd_key(doc))]


@functools.cache
def _crd_index(directory: Path) -> dict[tuple[str, str], Path]:
    index: dict[tuple[str, str], Path] = {}
    for path in sorted(directory.rglob("*")):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        try:
            keys = _crd_keys_in_file(path)
        except yaml.YAMLError as exc:
            raise SchemaUnavailable(f"cannot parse {path}: {exc}") from exc
        for key in keys:
            if key in index and index[key] != path:
                raise ValueError(f"CRD {key[1]}.{key[0]} is defined twice: {index[key]} and {path}")
            index[key] = path
    return index


@dataclass(frozen=True)
class _CRD:
    path: Path
    namespaced: bool
    validators: dict[str, jsonschema.protocols.Validator]  # served version -> validator


@functools.cache
def crd_definition(directory: Path, group: str, kind: str) -> _CRD | None:
    path = _crd_index(directory).get((group, kind))
    if path is None:
        return None
    doc = next(doc for doc in _load_yaml_documents(path) if _crd_key(doc) == (group, kind))
    validators = {}
    for version in doc["spec"].get("versions", []):
        if not version.get("served", True):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            raise SchemaUnavailable(f"{path}: version {version.get('name')} has no openAPIV3Schema")
        validators[version["name"]] = schema_validator(schema)
    return _CRD(path, doc["spec"].get("scope", "Namespaced") == "Namespaced", validators)


def schema_validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    """A validator for one version's ``openAPIV3Schema`` (from a CRD file or as a cluster
    serves it)."""
    return jsonschema.Draft4Validator(_root_schema(schema), format_checker=_FORMAT_CHECKER)


def _root_schema(schema: dict[str, Any]) -> dict[str, Any]:
    root = _structural(schema)
    properties = root.setdefault("properties", {})
    # metadata is checked against ObjectMeta by check_model; keep it out of jsonschema's way.
    properties["metadata"] = {}
    return root


def _structural(node: Any) -> Any:
    """Translate a CRD structural schema into a plain JSON schema (see the module docstring)."""
    if not isinstance(node, dict):
        return node
    out = copy.copy(node)
    if "properties" in out:
        out["properties"] = {key: _structural(sub) for key, sub in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _structural(out["items"])
    elif isinstance(out.get("items"), list):
        out["items"] = [_structural(sub) for sub in out["items"]]
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = _structural(out["additionalProperties"])
    for keyword in ("allOf", "anyOf", "oneOf"):
        if isinstance(out.get(keyword), list):
            out[keyword] = [_structural(sub) for sub in out[keyword]]
    if isinstance(out.get("not"), dict):
        out["not"] = _structural(out["not"])

    if isinstance(out.get("required"), list):
        defaulted = {
            key
            for key, sub in out.get("properties", {}).items()
            if isinstance(sub, dict) and "default" in sub
        }
        out["required"] = [key for key in out["required"] if key not in defaulted]
        if not out["required"]:
            del out["required"]  # Draft 4 wants a non-empty list
    if isinstance(out.get("pattern"), str):
        out["pattern"] = "(?a)" + out["pattern"]
    if out.get("x-kubernetes-int-or-string") and "anyOf" not in out and "type" not in out:
        out["type"] = ["integer", "string"]
    if out.get("x-kubernetes-embedded-resource") and "properties" in out:
        for key, sub in (
            ("apiVersion", {"type": "string"}),
            ("kind", {"type": "string"}),
            ("metadata", {"type": "object"}),
        ):
            out["properties"].setdefault(key, sub)
    if out.get("nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    if (
        out.get("type") == "object"
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


_FORMAT_CHECKER = jsonschema.FormatChecker(formats=())


@_FORMAT_CHECKER.checks("int32")
def _is_int32(value: Any) -> bool:
    return not is_int(value) or INT32[0] <= value <= INT32[1]


@_FORMAT_CHECKER.checks("int64")
def _is_int64(value: Any) -> bool:
    return not is_int(value) or INT64[0] <= value <= INT64[1]


@_FORMAT_CHECKER.checks("date-time")
def _is_date_time(value: Any) -> bool:
    return not isinstance(value, str) or bool(RFC3339.fullmatch(value))


@_FORMAT_CHECKER.checks("byte")
def _is_byte(value: Any) -> bool:
    return not isinstance(value, str) or is_base64(value)


def jsonschema_errors(
    validator: jsonschema.protocols.Validator, obj: Mapping[str, Any]
) -> list[SchemaError]:
    errors: list[SchemaError] = []
    seen: set[SchemaError] = set()

    def add(error: SchemaError) -> None:
        if error not in seen:
            seen.add(error)
            errors.append(error)

    for error in validator.iter_errors(obj):
        path = format_path(error.absolute_path)
        instance = error.instance
        if error.validator == "additionalProperties" and isinstance(instance, Mapping):
            known = error.schema.get("properties", {})
            for key in instance:
                if key not in known:
                    add(SchemaError(join_path(path, str(key)), f"unknown field {key!r}"))
        elif error.validator == "required" and isinstance(instance, Mapping):
            for key in error.validator_value:
                if key not in instance:
                    add(SchemaError(join_path(path, key), "required field is missing"))
        elif error.validator == "type":
            expected = error.validator_value
            expected = " or ".join(expected) if isinstance(expected, list) else expected
            got = json_type(instance)
            message = (
                "must not be null (omit the field instead)"
                if instance is None
                else f"expected {expected}, got {got}"
            )
            add(SchemaError(path, message))
        elif error.validator == "pattern":
            pattern = str(error.validator_value).removeprefix("(?a)")
            add(SchemaError(path, f"{short(instance)} does not match pattern {pattern}"))
        elif error.validator == "enum":
            add(
                SchemaError(
                    path,
                    f"{short(instance)} is not one of "
                    f"{', '.join(map(repr, error.validator_value))}",
                )
            )
        elif (
            error.validator == "anyOf"
            and isinstance(error.schema, dict)
            and error.schema.get("x-kubernetes-int-or-string")
        ):
            add(SchemaError(path, f"expected integer or string, got {json_type(instance)}"))
        else:
            add(
                SchemaError(
                    path,
                    error.message if len(error.message) <= 300 else error.message[:297] + "...",
                )
            )
    return errors


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
