"""The Kubernetes 1.32 API schemas, and the OpenAPI documents served from them.

The schemas of the built-in types are not written here: they come from the
``kubernetes-validate`` package, which ships the upstream OpenAPI definitions of each
Kubernetes release as JSON Schema (``v1.32.0-local/_definitions.json``: every definition of
the release's swagger, with its ``required`` lists, formats, descriptions and the
``x-kubernetes-*`` extensions; types are made nullable). This module reads that file,
turns it back into OpenAPI (drop the ``null`` types, ``$ref`` into ``components``) and
generates the ``paths`` for the resources the sandbox serves, so that ``kubectl explain``
and kubectl's check for server-side field validation (the ``fieldValidation`` parameter of
a PATCH operation) work. Custom resources get their CRD's ``openAPIV3Schema``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from importlib import resources as package_files
from typing import Any

from . import openapiv2
from .resources import Registry, ResourceType

KUBERNETES_VERSION = "v1.32.0"
_SCHEMA_DIR = f"kubernetes-json-schema/{KUBERNETES_VERSION}-local"
_REF = "#/$defs/"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
# Types whose JSON form is a plain string although their Go type is a struct.
_STRING_TYPES = {
    QUANTITY: {"type": "string", "format": "quantity"},
    INT_OR_STRING: {"type": "string", "format": "int-or-string"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
}


@functools.cache
def definitions() -> dict[str, dict]:
    """Every definition of the Kubernetes 1.32 API, as shipped (JSON Schema, nullable)."""
    source = package_files.files("kubernetes_validate").joinpath(_SCHEMA_DIR, "_definitions.json")
    return json.loads(source.read_text())["$defs"]


@functools.cache
def _by_gvk() -> dict[tuple[str, str, str], str]:
    index = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            index[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    return _by_gvk().get((group, version, kind))


def resolve(schema: dict) -> dict:
    """Follow a ``$ref`` into the built-in definitions (one level)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return definitions()[ref.removeprefix(_REF)]
    return schema


def references(name: str) -> set[str]:
    """``name`` and every definition it refers to, transitively."""
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in definitions():
            continue
        seen.add(current)
        pending.extend(_refs_in(definitions()[current]))
    return seen


def _refs_in(node: Any) -> list[str]:
    found = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            found.append(ref.removeprefix(_REF))
        for value in node.values():
            found += _refs_in(value)
    elif isinstance(node, list):
        for value in node:
            found += _refs_in(value)
    return found


def to_openapi(node: Any, ref_prefix: str) -> Any:
    """The shipped JSON Schema back in OpenAPI form: single types, refs into ``ref_prefix``."""
    if isinstance(node, list):
        return [to_openapi(value, ref_prefix) for value in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith(_REF):
            out[key] = ref_prefix + value.removeprefix(_REF)
        elif key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            out[key] = types[0] if len(types) == 1 else types
        else:
            out[key] = to_openapi(value, ref_prefix)
    return out


def _component(name: str, ref_prefix: str) -> dict:
    if name in _STRING_TYPES:
        return {"description": definitions()[name].get("description", ""), **_STRING_TYPES[name]}
    schema = to_openapi(definitions()[name], ref_prefix)
    for field in ("apiVersion", "kind"):
        # The shipped schemas pin these with an enum; upstream's documents do not.
        prop = (schema.get("properties") or {}).get(field)
        if isinstance(prop, dict):
            prop.pop("enum", None)
    return schema


# -- custom resources ------------------------------------------------------------------------


def custom_definition_name(rt: ResourceType) -> str:
    """Upstream names a CRD's schema after its group reversed: io.argoproj.v1alpha1.Application."""
    return ".".join([*reversed(rt.group.split(".")), rt.version, rt.kind])


def custom_schema(rt: ResourceType, ref_prefix: str, v3: bool = True) -> dict:
    open_schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema = copy.deepcopy(rt.schema or open_schema)
    if not v3:
        schema = openapiv2.structural_v2(schema)
    schema.setdefault("type", "object")
    properties = schema.setdefault("properties", {})
    # The same words as every built-in type (taken from the shipped ConfigMap schema).
    common = definitions()["io.k8s.api.core.v1.ConfigMap"]["properties"]
    for field in ("apiVersion", "kind"):
        properties[field] = {"type": "string", "description": common[field]["description"]}
    # v2 has no allOf for kubectl's parser: a $ref with its description, as upstream's v2.
    meta_ref = {"$ref": ref_prefix + OBJECT_META}
    properties["metadata"] = {
        "description": "Standard object's metadata.",
        **({"allOf": [meta_ref]} if v3 else meta_ref),
    }
    schema["x-kubernetes-group-version-kind"] = [
        {"group": rt.group, "version": rt.version, "kind": rt.kind}
    ]
    return schema


# -- documents ------------------------------------------------------------------------------


def _parameter(name: str, description: str, where: str = "query", v3: bool = True) -> dict:
    param = {"name": name, "in": where, "description": description}
    if where == "path":
        param["required"] = True
    if v3:
        param["schema"] = {"type": "boolean" if name == "force" else "string", "uniqueItems": True}
    else:
        param["type"] = "boolean" if name == "force" else "string"
        param["uniqueItems"] = True
    return param


_WRITE_PARAMS = (
    ("dryRun", "When present, indicates that modifications should not be persisted."),
    (
        "fieldManager",
        "fieldManager is a name associated with the actor or entity that is making these changes.",
    ),
    (
        "fieldValidation",
        "fieldValidation instructs the server on how to handle objects in the "
        "request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: "
        "Ignore, Warn (the default) and Strict.",
    ),
)


def _operations(rt: ResourceType, ref: str, v3: bool) -> dict[str, dict]:
    """path -> {method: operation} for one resource type."""
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
    scope = "/namespaces/{namespace}" if rt.namespaced else ""
    collection = f"{prefix}{scope}/{rt.plural}"
    item = collection + "/{name}"
    op_kind = rt.kind + ("Namespaced" if rt.namespaced else "")

    def operation(action: str, verb: str, params: tuple = (), body: bool = False) -> dict:
        op: dict = {
            "operationId": f"{verb}{op_kind}",
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [_parameter(name, text, v3=v3) for name, text in params],
        }
        schema = {"$ref": ref}
        if v3:
            op["responses"] = {
                "200": {"description": "OK", "content": {"application/json": {"schema": schema}}}
            }
            if body:
                op["requestBody"] = {"content": {"*/*": {"schema": schema}}, "required": True}
        else:
            op["responses"] = {"200": {"description": "OK", "schema": schema}}
            if body:
                op["parameters"].append(
                    {"name": "body", "in": "body", "required": True, "schema": schema}
                )
        return op

    paths: dict[str, dict] = {}
    if "create" in rt.verbs:
        paths.setdefault(collection, {})["post"] = operation("post", "create", _WRITE_PARAMS, True)
    if rt.virtual:
        return paths
    paths.setdefault(collection, {})["get"] = operation("list", "list")
    paths[collection]["delete"] = operation("deletecollection", "deleteCollection")
    paths[item] = {
        "get": operation("get", "read"),
        "put": operation("put", "replace", _WRITE_PARAMS, True),
        "patch": operation(
            "patch",
            "patch",
            (*_WRITE_PARAMS, ("force", 'Force is going to "force" Apply requests.')),
            True,
        ),
        "delete": operation("delete", "delete", _WRITE_PARAMS[:1]),
    }
    path_params = [_parameter("name", "name of the " + rt.kind, "path", v3)] + (
        [_parameter("namespace", "object name and auth scope", "path", v3)] if rt.namespaced else []
    )
    paths[item]["parameters"] = path_params
    if rt.namespaced:
        paths[collection]["parameters"] = path_params[1:]
    return paths


class Documents:
    """The OpenAPI v2 and v3 documents of one sandbox, rebuilt when its CRDs change."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cache: dict[tuple[int, str], dict] = {}

    def _cached(self, key: str, build: Any) -> Any:
        cache_key = (self.registry.generation, key)
        if cache_key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[cache_key] = build()
        return self._cache[cache_key]

    def v3_paths(self) -> dict:
        """``/openapi/v3``: where each group-version's document is, with its hash."""

        def build() -> dict:
            paths = {}
            for group, version in self._group_versions():
                path = f"apis/{group}/{version}" if group else "api/v1"
                digest = (
                    hashlib.sha512(json.dumps(self.v3(group, version), sort_keys=True).encode())
                    .hexdigest()
                    .upper()
                )
                paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
            return {"paths": paths}

        return self._cached("v3-root", build)

    def _group_versions(self) -> list[tuple[str, str]]:
        found = [("", "v1")]
        for group, versions in self.registry.group_versions().items():
            found += [(group, version) for version in versions]
        return found

    def v3(self, group: str, version: str) -> dict | None:
        types = list(self.registry.types_in(group, version))
        if not types:
            return None

        def build() -> dict:
            prefix = "#/components/schemas/"
            schemas, paths = self._schemas_and_paths(types, prefix, v3=True)
            return {
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
                "paths": paths,
                "components": {"schemas": schemas},
            }

        return self._cached(f"v3:{group}/{version}", build)

    def v2(self) -> dict:
        def build() -> dict:
            types = self.registry.all()
            schemas, paths = self._schemas_and_paths(types, "#/definitions/", v3=False)
            return {
                "swagger": "2.0",
                "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
                "paths": paths,
                "definitions": schemas,
            }

        return self._cached("v2", build)

    def v2_protobuf(self) -> bytes:
        return self._cached("v2-protobuf", lambda: openapiv2.encode(self.v2(), definitions()))

    def _schemas_and_paths(
        self, types: list[ResourceType], prefix: str, *, v3: bool
    ) -> tuple[dict, dict]:
        names = references(STATUS) | references(DELETE_OPTIONS)
        schemas: dict[str, dict] = {}
        paths: dict[str, dict] = {}
        for rt in types:
            if rt.custom:
                name = custom_definition_name(rt)
                schemas[name] = custom_schema(rt, prefix, v3)
                names |= references(OBJECT_META)
            else:
                name = definition_name(rt.group, rt.version, rt.kind) or ""
                names |= references(name)
                names |= references(definition_name(rt.group, rt.version, rt.kind + "List") or "")
            if name:
                for path, operations in _operations(rt, prefix + name, v3).items():
                    paths.setdefault(path, {}).update(operations)
        for name in sorted(names):
            schemas[name] = _component(name, prefix)
        return schemas, paths
