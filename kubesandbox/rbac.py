"""RBAC: the authorizer, escalation prevention, ClusterRole aggregation and the bootstrap
roles every cluster has, after the upstream RBAC authorizer's documented behaviour.

``system:masters`` may do anything without any binding (as upstream, it short-circuits).
Everyone else may do what the stored Roles, ClusterRoles, RoleBindings and
ClusterRoleBindings grant. Writing a Role or ClusterRole that grants more than the writer
holds needs the ``escalate`` verb on it; a binding to a role whose permissions the writer
does not hold needs ``bind`` on that role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .authn import UserInfo
from .errors import ApiError
from .resources import RBAC, ResourceType
from .selectors import matches_label_selector
from .storeview import ControlledStore


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


# -- matching -----------------------------------------------------------------------------


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


def describe_user(user: UserInfo) -> str:
    groups = " ".join(json.dumps(g) for g in user.groups)
    return f'user "{user.username}" (groups=[{groups}])'


class Authorizer:
    """Reads the RBAC objects of a store (call with the store's lock held or not: it locks)."""

    def __init__(self, store: ControlledStore) -> None:
        self.store = store

    def _role_rules(self, ref: dict, namespace: str) -> list[dict] | None:
        if ref.get("kind") == "ClusterRole":
            role = self.store.stored_object(RBAC, "clusterroles", "", ref.get("name") or "")
        else:
            role = self.store.stored_object(RBAC, "roles", namespace, ref.get("name") or "")
        return None if role is None else role.get("rules") or []

    def bindings_for(self, user: UserInfo, namespace: str) -> list[tuple[dict, list[dict]]]:
        """(binding, rules of its role) for each binding naming this user."""
        found = []
        with self.store.lock:
            bindings = self.store.stored(RBAC, "clusterrolebindings")
            if namespace:
                bindings += self.store.stored(RBAC, "rolebindings", namespace)
            for binding in bindings:
                binding_ns = binding["metadata"].get("namespace", "")
                if not any(
                    subject_matches(s, user, binding_ns) for s in binding.get("subjects") or []
                ):
                    continue
                rules = self._role_rules(binding.get("roleRef") or {}, binding_ns)
                if rules is not None:
                    found.append((binding, rules))
        return found

    def rules_for(self, user: UserInfo, namespace: str) -> list[dict]:
        if user.is_admin:
            return [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]
        return [rule for _, rules in self.bindings_for(user, namespace) for rule in rules]

    def authorize(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        if user.is_admin:
            return True, ""
        for binding, rules in self.bindings_for(user, attrs.namespace):
            if any(rule_allows(rule, attrs) for rule in rules):
                kind = (
                    "RoleBinding"
                    if binding["metadata"].get("namespace")
                    else ("ClusterRoleBinding")
                )
                ref = binding.get("roleRef") or {}
                where = binding["metadata"]["name"]
                if kind == "RoleBinding":
                    where = f"{binding['metadata']['namespace']}/{where}"
                return True, (
                    f'RBAC: allowed by {kind} "{where}" of {ref.get("kind")} '
                    f'"{ref.get("name")}" to User "{user.username}"'
                )
        return False, ""

    # -- escalation prevention -----------------------------------------------------------

    def uncovered(self, user: UserInfo, namespace: str, rules: list[dict]) -> list[dict]:
        """The requested rules (broken down) that the user's own rules do not cover."""
        owned = self.rules_for(user, namespace)
        missing = []
        for rule in rules:
            for piece in _break_down(rule):
                if not any(_covers(own, piece) for own in owned):
                    missing.append(piece)
        return missing

    def check_role_write(self, user: UserInfo, rt: ResourceType, obj: dict) -> None:
        namespace = obj["metadata"].get("namespace", "")
        allowed, _ = self.authorize(
            user,
            Attributes(
                "escalate",
                api_group=RBAC,
                resource=rt.plural,
                namespace=namespace,
                name=obj["metadata"].get("name", ""),
            ),
        )
        if allowed:
            return
        missing = self.uncovered(user, namespace, obj.get("rules") or [])
        if missing:
            raise _escalation(rt, obj, user, missing)

    def check_binding_write(self, user: UserInfo, rt: ResourceType, obj: dict) -> None:
        namespace = obj["metadata"].get("namespace", "")
        ref = obj.get("roleRef") or {}
        role_resource = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        allowed, _ = self.authorize(
            user,
            Attributes(
                "bind",
                api_group=RBAC,
                resource=role_resource,
                namespace=namespace,
                name=ref.get("name", ""),
            ),
        )
        if allowed:
            return
        with self.store.lock:
            rules = self._role_rules(ref, namespace)
        if rules is None:
            raise ApiError(
                403,
                f'{rt.group_resource} "{obj["metadata"].get("name")}" is '
                f'forbidden: {role_resource}.{RBAC} "{ref.get("name")}" not found',
                details={"name": obj["metadata"].get("name"), "group": RBAC, "kind": rt.plural},
            )
        missing = self.uncovered(user, namespace, rules)
        if missing:
            raise _escalation(rt, obj, user, missing)


def _break_down(rule: dict) -> list[dict]:
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


def _covers(own: dict, piece: dict) -> bool:
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


def _go_rule(rule: dict) -> str:
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


def _escalation(rt: ResourceType, obj: dict, user: UserInfo, missing: list[dict]) -> ApiError:
    name = obj["metadata"].get("name", "")
    rules = "\n".join(_go_rule(rule) for rule in missing)
    return ApiError(
        403,
        f'{rt.group_resource} "{name}" is forbidden: {describe_user(user)} is attempting to '
        f"grant RBAC permissions not currently held:\n{rules}",
        details={"name": name, "group": RBAC, "kind": rt.plural},
    )


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


# -- ClusterRole aggregation (upstream's clusterrole-aggregation controller) ----------------


def aggregation_controller(
    store: ControlledStore, rt: ResourceType, obj: dict, deleted: bool
) -> None:
    if (rt.group, rt.plural) != (RBAC, "clusterroles"):
        return
    roles = store.stored(RBAC, "clusterroles")
    for role in list(roles):
        selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors")
        if not selectors:
            continue
        rules: list[dict] = []
        for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
            if other is role:
                continue
            labels = other["metadata"].get("labels") or {}
            if any(matches_label_selector(s, labels) for s in selectors):
                rules += [r for r in other.get("rules") or [] if r not in rules]
        if rules != (role.get("rules") or []):
            updated = {**role, "rules": rules}
            updated["metadata"] = dict(role["metadata"])
            store.write_internal(rt, updated)


# -- the bootstrap policy --------------------------------------------------------------------

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_VIEW = [
    (
        "",
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "pods/log",
            "pods/status",
            "services",
            "services/status",
            "serviceaccounts",
            "resourcequotas",
            "resourcequotas/status",
            "limitranges",
            "events",
            "namespaces",
            "namespaces/status",
        ],
    ),
    (
        "apps",
        [
            "deployments",
            "deployments/status",
            "statefulsets",
            "statefulsets/status",
            "daemonsets",
            "daemonsets/status",
            "replicasets",
            "replicasets/status",
        ],
    ),
    ("batch", ["jobs", "jobs/status", "cronjobs", "cronjobs/status"]),
    ("networking.k8s.io", ["ingresses", "ingresses/status", "networkpolicies"]),
    ("policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    ("autoscaling", ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    ("coordination.k8s.io", ["leases"]),
]
_EDIT = [
    (
        "",
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "pods",
            "secrets",
            "services",
            "serviceaccounts",
            "events",
        ],
    ),
    ("apps", ["deployments", "statefulsets", "daemonsets", "replicasets"]),
    ("batch", ["jobs", "cronjobs"]),
    ("networking.k8s.io", ["ingresses", "networkpolicies"]),
    ("policy", ["poddisruptionbudgets"]),
    ("autoscaling", ["horizontalpodautoscalers"]),
    ("coordination.k8s.io", ["leases"]),
]
_DISCOVERY_URLS = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
_AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"


def _cluster_role(
    name: str, rules: list[dict], labels: dict | None = None, aggregate: str = ""
) -> dict:
    role: dict = {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **(labels or {})},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "rules": rules,
    }
    if aggregate:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {_AGGREGATE + aggregate: "true"}}]
        }
        role["rules"] = []
    return role


def _binding(name: str, role: str, groups: list[str]) -> dict:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": g} for g in groups],
    }


def bootstrap_objects() -> list[dict]:
    view = [{"apiGroups": [g], "resources": r, "verbs": _READ} for g, r in _VIEW]
    edit = [{"apiGroups": [g], "resources": r, "verbs": _WRITE} for g, r in _EDIT]
    edit += [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": _READ},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    ]
    admin = [
        {"apiGroups": [RBAC], "resources": ["roles", "rolebindings"], "verbs": [*_READ, *_WRITE]},
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["localsubjectaccessreviews"],
            "verbs": ["create"],
        },
    ]
    to = _AGGREGATE
    return [
        _cluster_role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _cluster_role("admin", [], aggregate="admin"),
        _cluster_role("edit", [], {to + "admin": "true"}, aggregate="edit"),
        _cluster_role("view", [], {to + "edit": "true"}, aggregate="view"),
        _cluster_role("system:aggregate-to-admin", admin, {to + "admin": "true"}),
        _cluster_role("system:aggregate-to-edit", edit, {to + "edit": "true"}),
        _cluster_role("system:aggregate-to-view", view, {to + "view": "true"}),
        _cluster_role("system:discovery", [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]),
        _cluster_role(
            "system:public-info-viewer", [{"nonResourceURLs": _PUBLIC_URLS, "verbs": ["get"]}]
        ),
        _cluster_role(
            "system:basic-user",
            [
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _binding("cluster-admin", "cluster-admin", ["system:masters"]),
        _binding("system:discovery", "system:discovery", ["system:authenticated"]),
        _binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        _binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            ["system:authenticated", "system:unauthenticated"],
        ),
    ]
