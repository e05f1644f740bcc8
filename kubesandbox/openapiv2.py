"""``/openapi/v2`` as kube-apiserver serves it to kubectl: the gnostic ``openapi_v2.Document``
protobuf (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``), which
``kubectl explain --output=plaintext-openapiv2`` (and kubectl before 1.27, for everything)
reads; the JSON form stays for clients that ask for JSON.

Custom resources' schemas are published in v2 as kube-apiserver does: OpenAPI v2 has no
``nullable``, ``anyOf``, ``oneOf`` or ``not``, and kubectl's v2 parser refuses a typed node
whose properties it cannot check, so a nullable, ``x-kubernetes-preserve-unknown-fields``,
``x-kubernetes-embedded-resource`` or ``x-kubernetes-int-or-string`` node loses its type
(and properties and items), and a nullable field is no longer required. Field numbers are
those of gnostic's ``OpenAPIv2.proto``.
"""

from __future__ import annotations

import struct
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import yaml

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
# What the answer says it is: a "@" is no media type Go's mime package parses (kube-openapi's).
PROTOBUF_ANSWER = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


@dataclass(frozen=True)
class Binary:
    """An answer that is not JSON: its media type and bytes."""

    content_type: str
    data: bytes


def wants_protobuf(accept: str) -> bool | None:
    """True for the v2 protobuf, False for JSON, None for neither (406): first listed wins."""
    for media_range in accept.split(","):
        kind = media_range.split(";")[0].strip()
        if kind == PROTOBUF:
            return True
        if kind in ("application/json", "*/*", "application/*") or kind.endswith("+json"):
            return False
    return None if accept.strip() else False


# -- custom resources' schemas in v2 ----------------------------------------------------------

_UNTYPED = ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource")


def structural_v2(node: Any) -> Any:
    """A CRD's structural schema as kube-apiserver publishes it in OpenAPI v2."""
    if isinstance(node, list):
        return [structural_v2(value) for value in node]
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k not in ("nullable", "anyOf", "oneOf", "not")}
    if "allOf" in out and not (len(out["allOf"]) == 1 and "$ref" in out["allOf"][0]):
        del out["allOf"]
    if node.get("nullable") or any(node.get(flag) for flag in _UNTYPED):
        for key in ("type", "properties", "items"):
            out.pop(key, None)
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    properties = out.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: structural_v2(value) for name, value in properties.items()}
        nullable = {name for name, value in properties.items() if value.get("nullable")}
        if nullable and out.get("required"):
            out["required"] = [name for name in out["required"] if name not in nullable]
    for key in ("items", "additionalProperties", "allOf"):
        if isinstance(out.get(key), dict | list):
            out[key] = structural_v2(out[key])
    return out


# -- protobuf -------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _bytes(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _varint(len(data)) + data


def _string(number: int, value: Any) -> bytes:
    return _bytes(number, str(value).encode()) if value not in (None, "") else b""


def _int(number: int, value: Any) -> bytes:
    return _key(number, 0) + _varint(int(value)) if value else b""


def _double(number: int, value: Any) -> bytes:
    return _key(number, 1) + struct.pack("<d", float(value)) if value else b""


def _any(number: int, value: Any) -> bytes:
    """An ``Any`` carries its value as YAML (field 2)."""
    text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
    return _bytes(number, _string(2, text.removesuffix("\n...\n")))


def _extensions(number: int, node: dict) -> bytes:
    return b"".join(
        _bytes(number, _string(1, k) + _any(2, v)) for k, v in node.items() if k.startswith("x-")
    )


def schema(node: dict) -> bytes:
    out = [_string(1, node.get("$ref")), _string(2, node.get("format"))]
    out += [_string(3, node.get("title")), _string(4, node.get("description"))]
    if "default" in node:
        out.append(_any(5, node["default"]))
    for number, name in ((6, "multipleOf"), (7, "maximum"), (9, "minimum")):
        out.append(_double(number, node.get(name)))
    for number, name in ((8, "exclusiveMaximum"), (10, "exclusiveMinimum"), (16, "uniqueItems")):
        out.append(_int(number, bool(node.get(name))))
    for number, name in ((11, "maxLength"), (12, "minLength"), (14, "maxItems"), (15, "minItems")):
        out.append(_int(number, node.get(name)))
    out += [_int(17, node.get("maxProperties")), _int(18, node.get("minProperties"))]
    out.append(_string(13, node.get("pattern")))
    out += [_string(19, name) for name in node.get("required") or []]
    out += [_any(20, value) for value in node.get("enum") or []]
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_bytes(21, _bytes(1, schema(extra))))
    elif isinstance(extra, bool):  # a oneof: present even when false
        out.append(_bytes(21, _key(2, 0) + _varint(int(extra))))
    types = node.get("type")
    if types:
        out.append(_bytes(22, b"".join(_string(1, t) for t in _listed(types))))
    if "items" in node:
        out.append(_bytes(23, b"".join(_bytes(1, schema(s)) for s in _listed(node["items"]))))
    out += [_bytes(24, schema(s)) for s in node.get("allOf") or []]
    properties = node.get("properties")
    if isinstance(properties, dict):
        named = (_bytes(1, _string(1, k) + _bytes(2, schema(v))) for k, v in properties.items())
        out.append(_bytes(25, b"".join(named)))
    out += [_int(27, bool(node.get("readOnly")))]
    if "example" in node:
        out.append(_any(30, node["example"]))
    out.append(_extensions(31, node))
    return b"".join(out)


def _listed(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def _parameter(param: dict) -> bytes:
    """A ParametersItem: a body parameter, or a query/path one (NonBodyParameter)."""
    head = _string(3, param.get("description")) + _string(4, param.get("name"))
    where, required = param.get("in", "query"), _int(1, bool(param.get("required")))
    if where == "body":
        body = _string(1, param.get("description")) + _string(2, param.get("name"))
        body += _string(3, where) + _int(4, bool(param.get("required")))
        inner = _bytes(1, body + _bytes(5, schema(param.get("schema") or {})))
    else:
        typed = _string(6 if where == "query" else 5, param.get("type"))
        unique = _int(20 if where == "query" else 19, bool(param.get("uniqueItems")))
        sub = required + _string(2, where) + head + typed + unique
        inner = _bytes(2, _bytes(3 if where == "query" else 4, sub))
    return _bytes(1, inner)


def _operation(op: dict) -> bytes:
    out = [_string(1, tag) for tag in op.get("tags") or []]
    out += [_string(3, op.get("description")), _string(5, op.get("operationId"))]
    out += [_string(6, m) for m in op.get("produces") or []]
    out += [_string(7, m) for m in op.get("consumes") or []]
    out += [_bytes(8, _parameter(p)) for p in op.get("parameters") or []]
    codes = []
    for code, response in (op.get("responses") or {}).items():
        answer = _string(1, response.get("description"))
        if "schema" in response:
            answer += _bytes(2, _bytes(1, schema(response["schema"])))
        codes.append(_bytes(1, _string(1, code) + _bytes(2, _bytes(1, answer))))
    out += [_bytes(9, b"".join(codes)), _extensions(13, op)]
    return b"".join(out)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


# Definitions that are the same in every sandbox (the built-in ones), encoded once.
_STABLE: dict[str, bytes] = {}


def _definition(name: str, value: dict, stable: Collection[str]) -> bytes:
    if name not in stable:
        return schema(value)
    if name not in _STABLE:
        _STABLE[name] = schema(value)
    return _STABLE[name]


def encode(document: dict, stable: Collection[str] = ()) -> bytes:
    """The gnostic ``Document`` of an OpenAPI v2 document; the definitions named in
    ``stable`` never change, and are encoded once for the process."""
    info = document.get("info") or {}
    paths = []
    for path, item in (document.get("paths") or {}).items():
        fields = [_bytes(_METHODS[m], _operation(op)) for m, op in item.items() if m in _METHODS]
        fields += [_bytes(9, _parameter(p)) for p in item.get("parameters") or []]
        paths.append(_bytes(2, _string(1, path) + _bytes(2, b"".join(fields))))
    definitions = b"".join(
        _bytes(1, _string(1, name) + _bytes(2, _definition(name, value, stable)))
        for name, value in (document.get("definitions") or {}).items()
    )
    return b"".join(
        [
            _string(1, document.get("swagger", "2.0")),
            _bytes(2, _string(1, info.get("title")) + _string(2, info.get("version"))),
            _bytes(8, b"".join(paths)),
            _bytes(9, definitions),
        ]
    )
