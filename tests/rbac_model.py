"""An offline Kubernetes RBAC evaluator: `kubectl auth can-i` over objects held as dicts.

Pure: give it Roles, ClusterRoles, RoleBindings and ClusterRoleBindings (any other object is
ignored, so a whole plan can be passed as it is) and ask whether a subject may do a verb on a
resource. It follows the rules of Kubernetes' RBAC authorizer
(k8s.io/kubernetes/pkg/apis/rbac/v1 `VerbMatches`, `APIGroupMatches`, `ResourceMatches`,
`ResourceNameMatches`, and the rule resolver's binding walk):

- a RoleBinding grants its role's rules only in its own namespace; a ClusterRoleBinding
  everywhere, cluster-scoped resources included; a cluster-scoped request is decided by
  ClusterRoleBindings alone;
- `*` matches any verb, group or resource (subresources included), `*/<sub>` any resource's
  subresource `<sub>`; a resource with a subresource is asked for as `pods/exec`;
- a rule with `resourceNames` matches only requests that name one of them (never `list`
  or `create` without a name);
- subjects: a User by name, a Group by the user's groups (plus `system:authenticated`), a
  ServiceAccount by namespace and name (its groups are `system:serviceaccounts` and
  `system:serviceaccounts:<namespace>`);
- ClusterRoles with an `aggregationRule` get the rules of every ClusterRole its selectors
  match, as the aggregation controller would fill them in.

What it does not model: non-resource URLs, the default bindings of a real cluster
(`system:basic-user`, discovery; they grant nothing on resources), other authorizers
(Node, webhooks) and admission, which `tests.admission_model.allowed_by_admission`
evaluates separately.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

RBAC_GROUP = "rbac.authorization.k8s.io"

# The plural a kind is authorized and admitted under (RBAC and admission speak resources).
RESOURCES: dict[tuple[str, str], str] = {
    ("", "Namespace"): "namespaces",
    ("", "ServiceAccount"): "serviceaccounts",
    ("", "ResourceQuota"): "resourcequotas",
    ("", "LimitRange"): "limitranges",
    ("", "ConfigMap"): "configmaps",
    ("", "Secret"): "secrets",
    ("", "Service"): "services",
    ("", "Pod"): "pods",
    ("apps", "Deployment"): "deployments",
    ("apps", "StatefulSet"): "statefulsets",
    ("batch", "Job"): "jobs",
    ("networking.k8s.io", "NetworkPolicy"): "networkpolicies",
    ("networking.k8s.io", "Ingress"): "ingresses",
    (RBAC_GROUP, "Role"): "roles",
    (RBAC_GROUP, "RoleBinding"): "rolebindings",
    (RBAC_GROUP, "ClusterRole"): "clusterroles",
    (RBAC_GROUP, "ClusterRoleBinding"): "clusterrolebindings",
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): "validatingadmissionpolicies",
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ): "validatingadmissionpolicybindings",
    ("argoproj.io", "AppProject"): "appprojects",
    ("argoproj.io", "Application"): "applications",
    ("kargo.akuity.io", "Project"): "projects",
    ("kargo.akuity.io", "ProjectConfig"): "projectconfigs",
    ("kargo.akuity.io", "Stage"): "stages",
    ("kargo.akuity.io", "Warehouse"): "warehouses",
    ("cert-manager.io", "Certificate"): "certificates",
}


def resource_of(api_version: str, kind: str) -> tuple[str, str]:
    """(group, resource) of an object's apiVersion and kind."""
    group = api_version.rpartition("/")[0]
    try:
        return group, RESOURCES[(group, kind)]
    except KeyError:
        raise KeyError(
            f"no resource known for {kind} in {api_version!r}: add it to RESOURCES"
        ) from None


@dataclass(frozen=True)
class Subject:
    """Who asks: a user with groups, or a ServiceAccount."""

    username: str
    groups: tuple[str, ...] = ()
    # Set for ServiceAccounts: RBAC matches them by namespace and name.
    sa_namespace: str = ""
    sa_name: str = ""

    @classmethod
    def user(cls, username: str, *groups: str) -> Subject:
        return cls(username, (*groups, "system:authenticated"))

    @classmethod
    def service_account(cls, namespace: str, name: str) -> Subject:
        return cls(
            f"system:serviceaccount:{namespace}:{name}",
            (
                "system:serviceaccounts",
                f"system:serviceaccounts:{namespace}",
                "system:authenticated",
            ),
            sa_namespace=namespace,
            sa_name=name,
        )

    def __str__(self) -> str:
        return self.username


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists,
    DoesNotExist). An empty selector matches everything; `None` (absent) too."""
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(f"unknown label selector operator {operator!r}")
    return True


def _rule_allows(rule: Mapping[str, Any], verb: str, group: str, resource: str, name: str) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and verb not in verbs:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and group not in groups:
        return False
    base, _, subresource = resource.partition("/")
    if not any(
        allowed in ("*", resource) or (subresource and allowed == f"*/{subresource}")
        for allowed in rule.get("resources") or []
    ):
        return False
    names = rule.get("resourceNames") or []
    return not names or name in names


class Authorizer:
    """The RBAC objects of a cluster (or of a plan plus Berth's bootstrap), and questions."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self._roles: dict[tuple[str, str], list[dict]] = {}
        self._cluster_roles: dict[str, list[dict]] = {}
        self._bindings: list[Mapping[str, Any]] = []
        cluster_roles: dict[str, Mapping[str, Any]] = {}
        for obj in objects:
            if obj.get("apiVersion") != f"{RBAC_GROUP}/v1":
                continue
            meta = obj.get("metadata", {})
            if obj["kind"] == "Role":
                self._roles[(meta["namespace"], meta["name"])] = list(obj.get("rules") or [])
            elif obj["kind"] == "ClusterRole":
                cluster_roles[meta["name"]] = obj
            elif obj["kind"] in ("RoleBinding", "ClusterRoleBinding"):
                self._bindings.append(obj)
        for name, role in cluster_roles.items():
            rules = list(role.get("rules") or [])
            aggregation = role.get("aggregationRule")
            if aggregation:
                rules = [
                    rule
                    for other in cluster_roles.values()
                    if other is not role
                    and any(
                        label_selector_matches(selector, other["metadata"].get("labels") or {})
                        for selector in aggregation.get("clusterRoleSelectors") or []
                    )
                    for rule in other.get("rules") or []
                ]
            self._cluster_roles[name] = rules

    def _binds(self, binding: Mapping[str, Any], subject: Subject) -> bool:
        for entry in binding.get("subjects") or []:
            kind, name = entry.get("kind"), entry.get("name")
            if kind == "User" and name == subject.username:
                return True
            if kind == "Group" and name in subject.groups:
                return True
            if (
                kind == "ServiceAccount"
                and subject.sa_name
                and name == subject.sa_name
                and entry.get("namespace", binding["metadata"].get("namespace", ""))
                == subject.sa_namespace
            ):
                return True
        return False

    def _rules_of(self, binding: Mapping[str, Any]) -> list[dict]:
        ref = binding["roleRef"]
        if ref["kind"] == "ClusterRole":
            return self._cluster_roles.get(ref["name"], [])
        return self._roles.get((binding["metadata"].get("namespace", ""), ref["name"]), [])

    def can_i(
        self,
        subject: Subject,
        verb: str,
        group: str,
        resource: str,
        namespace: str = "",
        name: str = "",
    ) -> bool:
        """Like `kubectl auth can-i <verb> <resource>[.<group>][/<sub>] [<name>] -n <ns> --as`.

        `resource` is the plural, with its subresource after a slash (`pods/exec`);
        `namespace` is empty for cluster-scoped resources (and cluster-wide requests)."""
        return bool(self.why(subject, verb, group, resource, namespace, name))

    def why(
        self,
        subject: Subject,
        verb: str,
        group: str,
        resource: str,
        namespace: str = "",
        name: str = "",
    ) -> str:
        """The binding that allows the request ("Kind/namespace/name"), or "" when none does."""
        for binding in self._bindings:
            scoped = binding["kind"] == "RoleBinding"
            if scoped and binding["metadata"].get("namespace") != namespace:
                continue
            if scoped and not namespace:
                continue
            if not self._binds(binding, subject):
                continue
            if any(
                _rule_allows(rule, verb, group, resource, name) for rule in self._rules_of(binding)
            ):
                meta = binding["metadata"]
                where = f"{meta['namespace']}/" if scoped else ""
                return f"{binding['kind']}/{where}{meta['name']}"
        return ""
