"""Offline schema validation of the Kubernetes objects Berth renders, before anything is applied.

Berth renders objects as plain dicts (``apiVersion``, ``kind``, ``metadata``, ``spec``...).
:func:`validate_object` checks one such dict against the schema of its kind and returns a list of
:class:`SchemaError` (empty when valid); :func:`validate_objects` does the same for a batch.
Nothing here talks to a cluster or the network.

Where the schemas come from
---------------------------
* **Built-in Kubernetes kinds** (Namespace, ResourceQuota, LimitRange, NetworkPolicy, RBAC,
  Deployment, Service, ConfigMap, Ingress, ValidatingAdmissionPolicy[Binding]... any kind the
  official ``kubernetes`` Python client can *create*): the client's generated models are the API
  schema. ``(apiVersion, kind)`` is mapped to a model class through the client's API classes: the
  group/version selects the module (``networking.k8s.io/v1`` -> ``networking_v1_api``, confirmed by
  the ``/apis/<group>/<version>/`` paths in that module) and the ``body`` annotation of its
  ``create_[namespaced_]<kind>`` method names the model (``V1NetworkPolicy``). A model's
  ``attribute_map`` gives the JSON field names, ``openapi_types`` their types (``str``, ``int``,
  ``bool``, ``float``, ``datetime``, ``bytes``, ``object``, ``List[...]``, ``Dict[str, ...]``,
  other models), and -- the 37.x client generates pydantic v2 models -- ``model_fields[...]
  .is_required()`` which fields are required. ``object`` is refined from the pydantic annotation:
  ``int | str`` is an IntOrString (integer or string), ``Dict[str, Any]`` must be a JSON object,
  anything else is free-form.
* **Custom resources** (Argo CD, Kargo, Flux): the upstream CRD YAMLs in a directory (the
  ``crd_dir`` argument, else ``$BERTH_CRD_DIR``, else ``<repo>/../shared/crds``; see
  ``SOURCES.md`` there). The ``openAPIV3Schema`` of the served version named by the object's
  apiVersion is checked with ``jsonschema`` (Draft 4 semantics, which OpenAPI v3.0 schemas
  follow), after this translation of the structural-schema dialect:

  - objects with ``type: object`` and no ``additionalProperties`` and no
    ``x-kubernetes-preserve-unknown-fields: true`` get ``additionalProperties: false``: the API
    server would silently prune unknown fields, here they are *refused*;
  - ``x-kubernetes-preserve-unknown-fields: true`` leaves the node open;
  - ``x-kubernetes-int-or-string: true`` without ``anyOf`` becomes ``type: [integer, string]``;
  - ``nullable: true`` adds ``null`` to the node's type/enum;
  - ``x-kubernetes-embedded-resource: true`` implicitly allows ``apiVersion``/``kind``/``metadata``;
  - a ``required`` property that has a ``default`` is not required (the server defaults it
    before validating);
  - ``pattern`` is matched with ASCII semantics (Go's RE2 ``\\w``/``\\d`` are ASCII-only);
  - ``format`` ``int32``/``int64`` (range), ``date-time`` (RFC 3339) and ``byte`` (base64) are
    checked; other formats are ignored, as the API server ignores unknown ones.

  CRD schemas leave ``metadata`` open, so metadata is checked against the built-in ``ObjectMeta``
  model instead (unknown fields, labels/annotations must map strings to strings, ...).

For every kind, ``metadata.name`` is required (objects are applied by name, ``generateName``
does not apply), ``metadata.namespace`` is refused on cluster-scoped kinds, and ``null`` values
are refused unless the schema says ``nullable`` or the field is free-form (omit a field instead
of setting it to ``None``). An unknown ``(apiVersion, kind)`` is an error, never a pass.

What it cannot check
--------------------
* Defaulting and mutation (server defaults, admission webhooks, mutating policies): the dict is
  validated as written. Only "required but defaulted" is understood, see above.
* Go-side validation of built-in kinds (name/label syntax, port ranges, quantity syntax, enum
  values, cross-field rules): the client models carry types and required fields only.
  Quantities are only checked to be strings.
* CEL rules in CRDs (``x-kubernetes-validations``) are **not evaluated**; nor are validating
  webhooks of Argo CD / Kargo / Flux, ``x-kubernetes-list-type``/``-map-keys`` uniqueness,
  or references between objects (a Stage's Warehouse existing, a RoleBinding's Role...).

If a custom kind is to be validated but the CRD directory does not exist, or the client models
are not the pydantic kind this module understands, :class:`SchemaUnavailable` is raised rather
than letting the object pass.
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import re
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import yaml

__all__ = [
    "CRD_DIR_ENV",
    "SchemaError",
    "SchemaUnavailable",
    "crd_directory",
    "validate_object",
    "validate_objects",
]

CRD_DIR_ENV = "BERTH_CRD_DIR"
_DEFAULT_CRD_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "crds"


def _yaml_documents(stream: Any) -> list[Any]:
    """Safe-load every YAML document (libyaml's C loader when available: ~10x faster)."""
    if hasattr(yaml, "CSafeLoader"):
        return list(yaml.load_all(stream, Loader=yaml.CSafeLoader))
    return list(yaml.safe_load_all(stream))


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


# --------------------------------------------------------------------------------------------
# Public API


def crd_directory(crd_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The CRD directory that would be used: ``crd_dir``, else ``$BERTH_CRD_DIR``, else
    ``<repo>/../shared/crds``. ``None`` when that directory does not exist."""
    path, _ = _crd_dir_candidate(crd_dir)
    return path.resolve() if path.is_dir() else None


def validate_object(
    obj: Mapping[str, Any], *, crd_dir: str | os.PathLike[str] | None = None
) -> list[SchemaError]:
    """Validate one rendered object; return its problems (empty list when valid).

    Raises :class:`SchemaUnavailable` when ``obj`` is not a built-in kind and the CRD directory
    does not exist.
    """
    if not isinstance(obj, Mapping):
        return [SchemaError("", f"object must be a mapping, got {_json_type(obj)}")]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    errors = []
    if not isinstance(api_version, str) or not _API_VERSION.fullmatch(api_version):
        errors.append(
            SchemaError(
                "apiVersion", f'must be "<group>/<version>" or "<version>", got {api_version!r}'
            )
        )
    if not isinstance(kind, str) or not kind:
        errors.append(SchemaError("kind", f"must be a non-empty string, got {kind!r}"))
    if errors:
        return errors
    group, _, version = api_version.rpartition("/")

    builtin_versions = _builtin_group_versions(group)
    if builtin_versions:
        if version not in builtin_versions:
            return [
                SchemaError(
                    "apiVersion",
                    f"{api_version} is not an API version of the built-in "
                    f"group {group or 'core'!r} (known: "
                    f"{', '.join(sorted(builtin_versions))})",
                )
            ]
        model = _builtin_kinds(group, version).get(kind)
        if model is None:
            return [SchemaError("kind", f"unknown kind {kind!r} in {api_version}")]
        cls_name, namespaced = model
        errors = []
        _check_model(obj, cls_name, "", errors)
        _check_metadata_rules(obj, namespaced, kind, errors)
        return errors

    directory = _require_crd_dir(crd_dir, api_version, kind)
    crd = _crd_definition(directory, group, kind)
    if crd is None:
        return [
            SchemaError(
                "kind",
                f"unknown kind: no built-in model and no CRD in {directory} "
                f"for apiVersion {api_version!r}, kind {kind!r}",
            )
        ]
    validator = crd.validators.get(version)
    if validator is None:
        return [
            SchemaError(
                "apiVersion",
                f"{api_version} is not served by the {kind} CRD "
                f"({crd.path.name}; served: {', '.join(crd.validators)})",
            )
        ]
    errors = []
    if "metadata" in obj:
        _check_model(obj["metadata"], "V1ObjectMeta", "metadata", errors)
    _check_metadata_rules(obj, crd.namespaced, kind, errors)
    errors.extend(_jsonschema_errors(validator, obj))
    return errors


def validate_objects(
    objs: Iterable[Mapping[str, Any]], *, crd_dir: str | os.PathLike[str] | None = None
) -> dict[str, list[SchemaError]]:
    """Validate a batch. Returns only the objects that have problems, keyed
    ``"Kind/namespace/name"`` (``"Kind/name"`` when the object has no namespace; ``#<index>``
    stands in for a missing name; a repeated key gets ``" #<index>"`` appended). An empty dict
    means every object is valid. Raises :class:`SchemaUnavailable` like :func:`validate_object`.
    """
    result: dict[str, list[SchemaError]] = {}
    for index, obj in enumerate(objs):
        errors = validate_object(obj, crd_dir=crd_dir)
        if not errors:
            continue
        key = _object_key(obj, index)
        if key in result:
            key = f"{key} #{index}"
        result[key] = errors
    return result


# --------------------------------------------------------------------------------------------
# Shared helpers

_API_VERSION = re.compile(
    r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?"
)
_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _format_path(parts: Iterable[str | int]) -> str:
    path = ""
    for part in parts:
        path = _join(path, part)
    return path


def _json_type(value: Any) -> str:
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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _object_key(obj: Any, index: int) -> str:
    if not isinstance(obj, Mapping):
        return f"#{index}"
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "?"
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else f"#{index}"
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        return f"{kind}/{namespace}/{name}"
    return f"{kind}/{name}"


def _check_metadata_rules(
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


# --------------------------------------------------------------------------------------------
# Built-in kinds: the kubernetes client's models

_MODEL_NAME = re.compile(
    r"(?:[A-Z][a-z]+)?(?P<version>V\d+(?:alpha\d+|beta\d+)?)(?P<kind>[A-Z]\w*)"
)
_SNAKE_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_API_PACKAGE = "kubernetes.client.api"
_MODELS_MODULE = "kubernetes.client.models"


def _snake(name: str) -> str:
    return _SNAKE_BOUNDARY.sub("_", name).lower()


def _api_prefix(group: str) -> str:
    return "core" if group == "" else re.sub(r"[.-]", "_", group.removesuffix(".k8s.io"))


def _api_path(group: str, version: str) -> str:
    return f"'/api/{version}/" if group == "" else f"'/apis/{group}/{version}/"


@functools.cache
def _api_module_names() -> frozenset[str]:
    package = importlib.import_module(_API_PACKAGE)
    return frozenset(info.name for info in pkgutil.iter_modules(package.__path__))


@functools.cache
def _api_module_source(module: str) -> str:
    spec = importlib.util.find_spec(f"{_API_PACKAGE}.{module}")
    if spec is None or spec.origin is None:
        return ""
    return Path(spec.origin).read_text(encoding="utf-8")


@functools.cache
def _builtin_group_versions(group: str) -> frozenset[str]:
    """Versions of ``group`` the client has an API class for (empty: not a built-in group)."""
    if not re.fullmatch(r"[a-z0-9.-]*", group):
        return frozenset()
    module_name = re.compile(rf"{re.escape(_api_prefix(group))}_(v\d+(?:alpha\d+|beta\d+)?)_api")
    versions = set()
    for module in _api_module_names():
        match = module_name.fullmatch(module)
        if match and _api_path(group, match[1]) in _api_module_source(module):
            versions.add(match[1])
    return frozenset(versions)


@functools.cache
def _builtin_kinds(group: str, version: str) -> dict[str, tuple[str, bool]]:
    """kind -> (model class name, namespaced) for the kinds of ``group/version`` that can be
    created (subresource bodies such as ``pods/eviction`` are left out)."""
    module = importlib.import_module(f"{_API_PACKAGE}.{_api_prefix(group)}_{version}_api")
    api_classes = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and value.__name__.endswith("Api")
    ]
    kinds: dict[str, tuple[str, bool]] = {}
    for api_class in api_classes:
        for method_name, method in inspect.getmembers(api_class, inspect.isfunction):
            method_match = re.fullmatch(r"create_(namespaced_)?([a-z0-9_]+)", method_name)
            if not method_match or method_name.endswith(
                ("_with_http_info", "_without_preload_content")
            ):
                continue
            body = inspect.signature(method).parameters.get("body")
            annotation = body.annotation if body is not None else None
            cls_name = (
                annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
            )
            model_match = _MODEL_NAME.fullmatch(cls_name)
            if (
                model_match
                and model_match["version"].lower() == version
                and _snake(model_match["kind"]) == method_match[2]
            ):
                kinds[model_match["kind"]] = (cls_name, bool(method_match[1]))
    return kinds


def _model_class(cls_name: str) -> type:
    models = importlib.import_module(_MODELS_MODULE)
    cls = getattr(models, cls_name, None)
    if cls is None or not isinstance(getattr(cls, "openapi_types", None), dict):
        raise SchemaUnavailable(f"kubernetes client has no model class {cls_name!r}")
    return cls


class _Field(NamedTuple):
    type: str  # an openapi_types string
    required: bool
    flavour: str  # for "object": "int-or-string", "mapping" or "any"


@functools.cache
def _model_fields(cls_name: str) -> dict[str, _Field]:
    """JSON field name -> _Field for one client model."""
    cls = _model_class(cls_name)
    pydantic_fields = getattr(cls, "model_fields", None)
    if not isinstance(pydantic_fields, dict):
        raise SchemaUnavailable(
            f"{cls_name} is not a pydantic model: this kubernetes client version is not supported "
            "(required fields cannot be determined)"
        )
    # openapi_types is keyed by the legacy attribute name ("_from", "_exec"), which is the
    # pydantic field's name or, for Python keywords, its alias (field "var_from", alias "_from").
    by_name = dict(pydantic_fields)
    for info in pydantic_fields.values():
        for alias in (info.alias, info.serialization_alias):
            if alias:
                by_name.setdefault(alias, info)
    fields = {}
    for attr, type_string in cls.openapi_types.items():
        info = by_name.get(attr)
        if info is None or attr not in cls.attribute_map:
            raise SchemaUnavailable(f"{cls_name}.{attr}: openapi_types/model_fields disagree")
        fields[cls.attribute_map[attr]] = _Field(
            type_string, info.is_required(), _object_flavour(info.annotation)
        )
    return fields


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of an annotation, without None and without Annotated[...] wrappers."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [alt for arg in typing.get_args(annotation) for alt in _unwrap(arg)]
    if typing.get_origin(annotation) is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return [] if annotation is type(None) else [annotation]


def _object_flavour(annotation: Any) -> str:
    alternatives = _unwrap(annotation)
    if len(alternatives) == 2 and set(alternatives) == {int, str}:
        return "int-or-string"
    if alternatives and all(typing.get_origin(alt) is dict or alt is dict for alt in alternatives):
        return "mapping"
    return "any"


@functools.cache
def _parse_type(type_string: str) -> tuple[str, str]:
    """("list", item type) | ("map", value type) | ("scalar", name) | ("model", class name)."""
    if match := re.fullmatch(r"(?:List|list)\[(.+)\]", type_string):
        return ("list", match[1])
    if match := re.fullmatch(r"Dict\[str, (.+)\]|dict\(str, (.+)\)", type_string):
        return ("map", match[1] or match[2])
    if type_string in _SCALARS:
        return ("scalar", type_string)
    if re.fullmatch(r"[A-Z]\w*", type_string):
        _model_class(type_string)
        return ("model", type_string)
    raise SchemaUnavailable(f"cannot interpret kubernetes client type {type_string!r}")


_SCALARS = {"str", "int", "bool", "float", "datetime", "date", "bytes", "object"}


def _check_type(
    value: Any, type_string: str, path: str, errors: list[SchemaError], flavour: str = "any"
) -> None:
    shape, arg = _parse_type(type_string)
    if shape == "model":
        _check_model(value, arg, path, errors)
    elif shape == "list":
        if not isinstance(value, list | tuple):
            errors.append(SchemaError(path, f"expected array, got {_json_type(value)}"))
            return
        for index, item in enumerate(value):
            _check_type(item, arg, _join(path, index), errors)
    elif shape == "map":
        if not isinstance(value, Mapping):
            errors.append(SchemaError(path, f"expected object, got {_json_type(value)}"))
            return
        for key, item in value.items():
            if not isinstance(key, str):
                errors.append(SchemaError(path, f"keys must be strings, got {key!r}"))
                continue
            if arg == "str" and (_is_int(item) or isinstance(item, float)):
                errors.append(
                    SchemaError(
                        _join(path, key),
                        f"expected string, got "
                        f"{_json_type(item)} (quantities and other map values "
                        "must be quoted strings)",
                    )
                )
                continue
            _check_type(item, arg, _join(path, key), errors)
    else:
        problem = _scalar_problem(value, arg, flavour)
        if problem:
            errors.append(SchemaError(path, problem))


def _scalar_problem(value: Any, name: str, flavour: str) -> str | None:
    got = _json_type(value)
    if name == "str":
        return None if isinstance(value, str) else f"expected string, got {got}"
    if name == "bool":
        return None if isinstance(value, bool) else f"expected boolean, got {got}"
    if name == "int":
        if not _is_int(value):
            return f"expected integer, got {got}"
        return None if _INT64[0] <= value <= _INT64[1] else "integer out of int64 range"
    if name == "float":
        ok = _is_int(value) or isinstance(value, float)
        return None if ok else f"expected number, got {got}"
    if name in ("datetime", "date"):
        if not isinstance(value, str):
            return f"expected string ({name}), got {got}"
        pattern = _RFC3339 if name == "datetime" else re.compile(r"\d{4}-\d{2}-\d{2}")
        return None if pattern.fullmatch(value) else f"{value!r} is not an RFC 3339 {name}"
    if name == "bytes":
        if not isinstance(value, str):
            return f"expected base64 string, got {got}"
        return None if _is_base64(value) else "expected base64-encoded data"
    # "object"
    if flavour == "int-or-string":
        ok = _is_int(value) or isinstance(value, str)
        return None if ok else f"expected integer or string, got {got}"
    if flavour == "mapping":
        return None if isinstance(value, Mapping) else f"expected object, got {got}"
    return None


def _check_model(value: Any, cls_name: str, path: str, errors: list[SchemaError]) -> None:
    if not isinstance(value, Mapping):
        errors.append(SchemaError(path, f"expected object ({cls_name}), got {_json_type(value)}"))
        return
    fields = _model_fields(cls_name)
    for key, item in value.items():
        if not isinstance(key, str):
            errors.append(SchemaError(path, f"field names must be strings, got {key!r}"))
            continue
        field_path = _join(path, key)
        field = fields.get(key)
        if field is None:
            errors.append(SchemaError(field_path, f"unknown field {key!r} ({cls_name})"))
        elif item is None:
            if not (field.type == "object" and field.flavour == "any"):
                errors.append(SchemaError(field_path, "must not be null (omit the field instead)"))
        else:
            _check_type(item, field.type, field_path, errors, field.flavour)
    for key, field in fields.items():
        if field.required and key not in value:
            errors.append(SchemaError(_join(path, key), "required field is missing"))


# --------------------------------------------------------------------------------------------
# Custom resources: upstream CRDs + jsonschema


def _crd_dir_candidate(crd_dir: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if crd_dir is not None:
        return Path(crd_dir), "crd_dir argument"
    from_env = os.environ.get(CRD_DIR_ENV)
    if from_env:
        return Path(from_env), f"${CRD_DIR_ENV}"
    return _DEFAULT_CRD_DIR, "default"


def _require_crd_dir(crd_dir: str | os.PathLike[str] | None, api_version: str, kind: str) -> Path:
    path, source = _crd_dir_candidate(crd_dir)
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
        return _yaml_documents(stream)


def _crd_keys_in_file(path: Path) -> list[tuple[str, str]]:
    """(group, kind) of every CRD in a file. For a single-document file only the part before
    ``spec.versions`` (group, names, scope) is parsed, so big CRDs are not loaded to be indexed."""
    text = path.read_text(encoding="utf-8")
    markers = len(re.findall(r"(?m)^---", text))
    if markers <= (1 if text.lstrip().startswith("---") else 0):
        versions = re.search(r"(?m)^  versions:", text)
        if versions:
            try:
                head = _yaml_documents(text[: versions.start()])[0]
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
def _crd_definition(directory: Path, group: str, kind: str) -> _CRD | None:
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
        validators[version["name"]] = jsonschema.Draft4Validator(
            _root_schema(schema), format_checker=_FORMAT_CHECKER
        )
    return _CRD(path, doc["spec"].get("scope", "Namespaced") == "Namespaced", validators)


def _root_schema(schema: dict[str, Any]) -> dict[str, Any]:
    root = _structural(schema)
    properties = root.setdefault("properties", {})
    # metadata is checked against ObjectMeta by _check_model; keep it out of jsonschema's way.
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
    return not _is_int(value) or _INT32[0] <= value <= _INT32[1]


@_FORMAT_CHECKER.checks("int64")
def _is_int64(value: Any) -> bool:
    return not _is_int(value) or _INT64[0] <= value <= _INT64[1]


@_FORMAT_CHECKER.checks("date-time")
def _is_date_time(value: Any) -> bool:
    return not isinstance(value, str) or bool(_RFC3339.fullmatch(value))


@_FORMAT_CHECKER.checks("byte")
def _is_byte(value: Any) -> bool:
    return not isinstance(value, str) or _is_base64(value)


def _jsonschema_errors(
    validator: jsonschema.protocols.Validator, obj: Mapping[str, Any]
) -> list[SchemaError]:
    errors: list[SchemaError] = []
    seen: set[SchemaError] = set()

    def add(error: SchemaError) -> None:
        if error not in seen:
            seen.add(error)
            errors.append(error)

    for error in validator.iter_errors(obj):
        path = _format_path(error.absolute_path)
        instance = error.instance
        if error.validator == "additionalProperties" and isinstance(instance, Mapping):
            known = error.schema.get("properties", {})
            for key in instance:
                if key not in known:
                    add(SchemaError(_join(path, str(key)), f"unknown field {key!r}"))
        elif error.validator == "required" and isinstance(instance, Mapping):
            for key in error.validator_value:
                if key not in instance:
                    add(SchemaError(_join(path, key), "required field is missing"))
        elif error.validator == "type":
            expected = error.validator_value
            expected = " or ".join(expected) if isinstance(expected, list) else expected
            got = _json_type(instance)
            message = (
                "must not be null (omit the field instead)"
                if instance is None
                else f"expected {expected}, got {got}"
            )
            add(SchemaError(path, message))
        elif error.validator == "pattern":
            pattern = str(error.validator_value).removeprefix("(?a)")
            add(SchemaError(path, f"{_short(instance)} does not match pattern {pattern}"))
        elif error.validator == "enum":
            add(
                SchemaError(
                    path,
                    f"{_short(instance)} is not one of "
                    f"{', '.join(map(repr, error.validator_value))}",
                )
            )
        elif (
            error.validator == "anyOf"
            and isinstance(error.schema, dict)
            and error.schema.get("x-kubernetes-int-or-string")
        ):
            add(SchemaError(path, f"expected integer or string, got {_json_type(instance)}"))
        else:
            add(
                SchemaError(
                    path,
                    error.message if len(error.message) <= 300 else error.message[:297] + "...",
                )
            )
    return errors


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
