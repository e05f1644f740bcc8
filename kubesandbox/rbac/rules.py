"""The rule algebra of RBAC: what a request asks (``Attributes``), whether a PolicyRule
allows it, whom a binding's subject names, and whether one rule covers another (what
escalation prevention compares), with the messages upstream answers a refusal in."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..authn import UserInfo


@dataclass(frozen=True)
class Attributes:
    verb: str
    resource_request: bool = True
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


def _has(values: Any, wanted: str) -> bool:
    return "*" in (values or []) or wanted in (values or [])


def _resource_matches(resources: list[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for item in resources or []:
        if item in ("*", combined):
            return True
        if subresource and item in (f"*/{subresource}", f"{resource}/*"):
            return True
    return False


def rule_allows(rule: dict, attrs: Attributes) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        for url in rule.get("nonResourceURLs") or []:
            if url in ("*", attrs.path) or (url.endswith("*") and attrs.path.startswith(url[:-1])):
                return True
        return False
    names = rule.get("resourceNames") or []
    return (
        _has(rule.get("apiGroups"), attrs.api_group)
        and _resource_matches(rule.get("resources") or [], attrs.resource, attrs.subresource)
        and (not names or attrs.name in names)
    )


def subject_matches(subject: dict, user: UserInfo, binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user.username
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user.username == f"system:serviceaccount:{namespace}:{name}"
    return False


# -- coverage (escalation prevention) -------------------------------------------------------


def break_down(rule: dict) -> list[dict]:
    """One rule as the single-verb, single-resource (or single-URL) rules it grants."""
    pieces = []
    for verb in rule.get("verbs") or []:
        if rule.get("nonResourceURLs"):
            pieces += [
                {"nonResourceURLs": [url], "verbs": [verb]} for url in rule["nonResourceURLs"]
            ]
            continue
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                for name in rule.get("resourceNames") or [""]:
                    piece = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                    if name:
                        piece["resourceNames"] = [name]
                    pieces.append(piece)
    return pieces


def covers(own: dict, piece: dict) -> bool:
    """Whether a held rule grants all of one broken-down piece."""
    if not _has(own.get("verbs"), piece["verbs"][0]):
        return False
    if "nonResourceURLs" in piece:
        url = piece["nonResourceURLs"][0]
        return any(
            u in ("*", url) or (u.endswith("*") and url.startswith(u[:-1]))
            for u in own.get("nonResourceURLs") or []
        )
    if own.get("nonResourceURLs") and not own.get("resources"):
        return False
    resource = piece["resources"][0]
    base, _, sub = resource.partition("/")
    names = own.get("resourceNames") or []
    wanted_names = piece.get("resourceNames") or []
    return (
        _has(own.get("apiGroups"), piece["apiGroups"][0])
        and (
            resource in (own.get("resources") or [])
            or "*" in (own.get("resources") or [])
            or (sub and _resource_matches(own.get("resources") or [], base, sub))
        )
        and (not names or (wanted_names and wanted_names[0] in names))
    )


# -- messages -------------------------------------------------------------------------------


def describe_user(user: UserInfo) -> str:
    groups = " ".join(json.dumps(g) for g in user.groups)
    return f'user "{user.username}" (groups=[{groups}])'


def go_rule(rule: dict) -> str:
    """A PolicyRule printed as Go's %+v prints it, as upstream's escalation message lists."""
    parts = []
    for key, label in (
        ("apiGroups", "APIGroups"),
        ("resources", "Resources"),
        ("resourceNames", "ResourceNames"),
        ("nonResourceURLs", "NonResourceURLs"),
        ("verbs", "Verbs"),
    ):
        if key in rule:
            parts.append(f"{label}:[" + " ".join(json.dumps(v) for v in rule[key]) + "]")
    return "{" + ", ".join(parts) + "}"


def forbidden_message(user: UserInfo, attrs: Attributes) -> str:
    who = f'User "{user.username}"'
    if not attrs.resource_request:
        return f'forbidden: {who} cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    target = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    if attrs.name:
        target += f' "{attrs.name}"'
    scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (
        f'{target} is forbidden: {who} cannot {attrs.verb} resource "{resource}" in API '
        f'group "{attrs.api_group}" {scope}'
    )
