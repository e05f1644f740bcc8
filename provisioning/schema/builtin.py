"""Built-in kinds, checked against the official client's generated models: (apiVersion,
kind) -> model class through the client's API classes; types and required fields from
the pydantic models.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import pkgutil
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from provisioning.schema.common import (
    INT64,
    RFC3339,
    SchemaError,
    SchemaUnavailable,
    is_base64,
    is_int,
    join_path,
    json_type,
)

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
def builtin_group_versions(group: str) -> frozenset[str]:
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
def builtin_kinds(group: str, version: str) -> dict[str, tuple[str, bool]]:
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
def model_fields(cls_name: str) -> dict[str, _Field]:
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
def parse_type(type_string: str) -> tuple[str, str]:
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
    shape, arg = parse_type(type_string)
    if shape == "model":
        check_model(value, arg, path, errors)
    elif shape == "list":
        if not isinstance(value, list | tuple):
            errors.append(SchemaError(path, f"expected array, got {json_type(value)}"))
            return
        for index, item in enumerate(value):
            _check_type(item, arg, join_path(path, index), errors)
    elif shape == "map":
        if not isinstance(value, Mapping):
            errors.append(SchemaError(path, f"expected object, got {json_type(value)}"))
            return
        for key, item in value.items():
            if not isinstance(key, str):
                errors.append(SchemaError(path, f"keys must be strings, got {key!r}"))
                continue
            if arg == "str" and (is_int(item) or isinstance(item, float)):
                errors.append(
                    SchemaError(
                        join_path(path, key),
                        f"expected string, got "
                        f"{json_type(item)} (quantities and other map values "
                        "must be quoted strings)",
                    )
                )
                continue
            _check_type(item, arg, join_path(path, key), errors)
    else:
        problem = _scalar_problem(value, arg, flavour)
        if problem:
            errors.append(SchemaError(path, problem))


def _scalar_problem(value: Any, name: str, flavour: str) -> str | None:
    got = json_type(value)
    if name == "str":
        return None if isinstance(value, str) else f"expected string, got {got}"
    if name == "bool":
        return None if isinstance(value, bool) else f"expected boolean, got {got}"
    if name == "int":
        if not is_int(value):
            return f"expected integer, got {got}"
        return None if INT64[0] <= value <= INT64[1] else "integer out of int64 range"
    if name == "float":
        ok = is_int(value) or isinstance(value, float)
        return None if ok else f"expected number, got {got}"
    if name in ("datetime", "date"):
        if not isinstance(value, str):
            return f"expected string ({name}), got {got}"
        pattern = RFC3339 if name == "datetime" else re.compile(r"\d{4}-\d{2}-\d{2}")
        return None if pattern.fullmatch(value) else f"{value!r} is not an RFC 3339 {name}"
    if name == "bytes":
        if not isinstance(value, str):
            return f"expected base64 string, got {got}"
        return None if is_base64(value) else "expected base64-encoded data"
    # "object"
    if flavour == "int-or-string":
        ok = is_int(value) or isinstance(value, str)
        return None if ok else f"expected integer or string, got {got}"
    if flavour == "mapping":
        return None if isinstance(value, Mapping) else f"expected object, got {got}"
    return None


def check_model(value: Any, cls_name: str, path: str, errors: list[SchemaError]) -> None:
    if not isinstance(value, Mapping):
        errors.append(SchemaError(path, f"expected object ({cls_name}), got {json_type(value)}"))
        return
    fields = model_fields(cls_name)
    for key, item in value.items():
        if not isinstance(key, str):
            errors.append(SchemaError(path, f"field names must be strings, got {key!r}"))
            continue
        field_path = join_path(path, key)
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
            errors.append(SchemaError(join_path(path, key), "required field is missing"))
