"""Which resource an API path names (``/api/v1/namespaces/x/configmaps/y/status``), or the
discovery document it asks for."""

from __future__ import annotations

from dataclasses import dataclass

from .discovery import resource_list
from .errors import not_found_path
from .resources import Registry, ResourceType

# (method, names one object) -> the verb RBAC checks
VERBS = {
    ("GET", True): "get",
    ("GET", False): "list",
    ("POST", False): "create",
    ("PUT", True): "update",
    ("PATCH", True): "patch",
    ("DELETE", True): "delete",
    ("DELETE", False): "deletecollection",
}


@dataclass
class Route:
    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str


def is_api_path(segments: list[str]) -> bool:
    return (segments[0] == "api" and len(segments) >= 2) or (
        segments[0] == "apis" and len(segments) >= 3
    )


def route(registry: Registry, segments: list[str]) -> Route | dict:
    """The resource an API path names, or the APIResourceList of its group-version."""
    if segments[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", segments[2:]
    elif segments[:1] == ["apis"] and len(segments) >= 3:
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        raise not_found_path()
    if not rest:
        types = list(registry.types_in(group, version))
        if not types:
            raise not_found_path()
        return resource_list(types)
    namespace = None
    scoped = registry.find_type(group, version, rest[2]) if len(rest) >= 3 else None
    if rest[0] == "namespaces" and scoped is not None and scoped.namespaced:
        namespace, rest = rest[1], rest[2:]
    rt = registry.find_type(group, version, rest[0])
    tail = rest[1:]
    if rt is None or len(tail) > 2 or (rt.namespaced and namespace is None and tail):
        raise not_found_path()
    subresource = tail[1] if len(tail) == 2 else ""
    if subresource and not rt.subresource_verbs(subresource):
        raise not_found_path()
    return Route(rt, namespace, tail[0] if tail else None, subresource)
