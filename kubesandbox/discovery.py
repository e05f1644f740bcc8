"""The answers that are not objects: health, version, the API discovery documents and the
OpenAPI documents."""

from __future__ import annotations

from . import openapiv2
from .errors import ApiError, not_found_path
from .openapi import Documents
from .resources import Registry, ResourceType


def api_group(name: str, versions: list[str]) -> dict:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": listed,
        "preferredVersion": listed[0],
    }


def resource_list(types: list[ResourceType]) -> dict:
    """The APIResourceList of one group-version (``types`` is not empty)."""
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": types[0].api_version,
        "resources": [e for rt in types for e in rt.discovery_entries()],
    }


def non_resource(
    path: str,
    segments: list[str],
    *,
    registry: Registry,
    documents: Documents,
    version_info: dict,
    accept: str,
    address: str,
) -> dict | str | openapiv2.Binary:
    """The answer to a GET of a path that names no resource (404 for an unknown one)."""
    if path in ("/healthz", "/livez", "/readyz"):
        return "ok"
    if path == "/version":
        return version_info
    if path == "/api":
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
        }
    if path == "/apis":
        groups = [api_group(g, v) for g, v in registry.group_versions().items()]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    if len(segments) == 2 and segments[0] == "apis":
        versions = registry.group_versions().get(segments[1])
        if not versions:
            raise not_found_path()
        return api_group(segments[1], versions)
    if path == "/openapi/v2":
        protobuf = openapiv2.wants_protobuf(accept)
        if protobuf is None:
            raise ApiError(
                406,
                f"only application/json and {openapiv2.PROTOBUF} are served here",
            )
        if protobuf:
            return openapiv2.Binary(openapiv2.PROTOBUF_ANSWER, documents.v2_protobuf())
        return documents.v2()
    if path == "/openapi/v3":
        return documents.v3_paths()
    if segments[:2] == ["openapi", "v3"]:
        rest = segments[2:]
        if rest[:1] == ["api"] and rest[1:] == ["v1"]:
            document = documents.v3("", "v1")
        elif rest[:1] == ["apis"] and len(rest) == 3:
            document = documents.v3(rest[1], rest[2])
        else:
            document = None
        if document is None:
            raise not_found_path()
        return document
    raise not_found_path()
