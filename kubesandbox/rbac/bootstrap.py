"""The bootstrap policy: the ClusterRoles and ClusterRoleBindings every cluster starts with
(cluster-admin, the aggregated admin/edit/view, discovery, public info, basic user), as
upstream's ``rbac-defaults``."""

from __future__ import annotations

from ..resources import RBAC

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
