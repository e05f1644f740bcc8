"""The offline RBAC evaluator answers like `kubectl auth can-i` would."""

import pytest

from tests.rbac_model import Authorizer, Subject, label_selector_matches, resource_of

RBAC = "rbac.authorization.k8s.io/v1"


def cluster_role(name: str, *rules: dict, labels=None, aggregate=None) -> dict:
    role = {"apiVersion": RBAC, "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels or {}}, "rules": list(rules)}
    if aggregate:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": aggregate}]}
    return role


def role(namespace: str, name: str, *rules: dict) -> dict:
    return {"apiVersion": RBAC, "kind": "Role",
            "metadata": {"name": name, "namespace": namespace}, "rules": list(rules)}


def binding(namespace: str, name: str, role_kind: str, role_name: str, *subjects: dict) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": RBAC, "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind,
                        "name": role_name},
            "subjects": list(subjects)}


def rule(groups, resources, verbs, names=()) -> dict:
    out = {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
    if names:
        out["resourceNames"] = list(names)
    return out


GROUP = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}
DEV = Subject.user("dana", "devs")
STRANGER = Subject.user("sam", "others")
SA = Subject.service_account("team-a", "deployer")

WORLD = Authorizer([
    cluster_role("deployer", rule(["apps"], ["deployments"], ["get", "create"]),
                 rule([""], ["pods/exec"], ["create"]),
                 rule([""], ["configmaps"], ["update"], names=["settings"])),
    cluster_role("everything", rule(["*"], ["*"], ["*"])),
    cluster_role("scaler", rule(["apps"], ["*/scale"], ["update"])),
    cluster_role("piece", rule([""], ["secrets"], ["get"]), labels={"agg": "yes"}),
    cluster_role("aggregated", aggregate={"agg": "yes"}),
    role("team-a", "local", rule([""], ["services"], ["create"])),
    binding("team-a", "devs-deploy", "ClusterRole", "deployer", GROUP),
    binding("team-a", "devs-local", "Role", "local", GROUP),
    binding("team-a", "devs-scale", "ClusterRole", "scaler", GROUP),
    binding("team-a", "sa-deploy", "ClusterRole", "deployer",
            {"kind": "ServiceAccount", "name": "deployer", "namespace": "team-a"}),
    binding("team-b", "agg", "ClusterRole", "aggregated", GROUP),
    binding("", "root", "ClusterRole", "everything",
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "root"}),
])


@pytest.mark.parametrize(
    ("subject", "verb", "group", "resource", "namespace", "name", "expected"),
    [
        pytest.param(DEV, "create", "apps", "deployments", "team-a", "", True,
                     id="group-member-creates-in-the-bound-namespace"),
        pytest.param(DEV, "create", "apps", "deployments", "team-b", "", False,
                     id="a-rolebinding-grants-nothing-in-another-namespace"),
        pytest.param(DEV, "create", "apps", "deployments", "", "", False,
                     id="a-rolebinding-grants-nothing-cluster-wide"),
        pytest.param(DEV, "delete", "apps", "deployments", "team-a", "x", False,
                     id="only-the-listed-verbs"),
        pytest.param(DEV, "create", "", "deployments", "team-a", "", False,
                     id="the-group-must-match"),
        pytest.param(DEV, "create", "", "pods/exec", "team-a", "web", True,
                     id="subresource-by-its-full-name"),
        pytest.param(DEV, "create", "", "pods", "team-a", "", False,
                     id="a-subresource-grant-is-not-the-resource"),
        pytest.param(DEV, "update", "", "configmaps", "team-a", "settings", True,
                     id="resource-names-match-the-named-object"),
        pytest.param(DEV, "update", "", "configmaps", "team-a", "other", False,
                     id="resource-names-refuse-other-objects"),
        pytest.param(DEV, "update", "", "configmaps", "team-a", "", False,
                     id="resource-names-refuse-a-request-without-a-name"),
        pytest.param(DEV, "update", "apps", "deployments/scale", "team-a", "web", True,
                     id="star-slash-subresource"),
        pytest.param(DEV, "update", "apps", "deployments", "team-a", "web", False,
                     id="star-slash-subresource-is-not-the-resource"),
        pytest.param(DEV, "create", "", "services", "team-a", "", True, id="a-namespaced-role"),
        pytest.param(DEV, "get", "", "secrets", "team-b", "db", True,
                     id="aggregated-cluster-role-gets-the-labelled-rules"),
        pytest.param(STRANGER, "get", "apps", "deployments", "team-a", "", False,
                     id="not-a-subject"),
        pytest.param(SA, "create", "apps", "deployments", "team-a", "", True,
                     id="service-account-by-namespace-and-name"),
        pytest.param(Subject.service_account("team-b", "deployer"), "create", "apps",
                     "deployments", "team-a", "", False,
                     id="same-service-account-name-in-another-namespace"),
        pytest.param(Subject.user("root"), "escalate", "rbac.authorization.k8s.io",
                     "clusterroles", "", "admin", True, id="cluster-role-binding-with-wildcards"),
        pytest.param(Subject.user("root"), "create", "", "pods/exec", "any", "x", True,
                     id="star-matches-subresources"),
    ],
)
def test_can_i(subject, verb, group, resource, namespace, name, expected):
    assert WORLD.can_i(subject, verb, group, resource, namespace, name) is expected


def test_why_names_the_binding_that_allows_it():
    assert WORLD.why(DEV, "create", "apps", "deployments", "team-a") == (
        "RoleBinding/team-a/devs-deploy")
    assert WORLD.why(DEV, "create", "apps", "deployments", "team-b") == ""


def test_a_binding_to_a_missing_role_grants_nothing():
    authorizer = Authorizer([binding("team-a", "dangling", "ClusterRole", "missing", GROUP)])
    assert not authorizer.can_i(DEV, "get", "", "pods", "team-a")


def test_service_accounts_carry_their_groups():
    assert SA.username == "system:serviceaccount:team-a:deployer"
    assert "system:serviceaccounts:team-a" in SA.groups


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ({}, {}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]},
         {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
         {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {}, True),
    ],
)
def test_label_selectors(selector, labels, expected):
    assert label_selector_matches(selector, labels) is expected


def test_resources_are_looked_up_by_group_and_kind():
    assert resource_of("kargo.akuity.io/v1alpha1", "Project") == ("kargo.akuity.io", "projects")
    assert resource_of("v1", "ResourceQuota") == ("", "resourcequotas")
    with pytest.raises(KeyError, match="add it to RESOURCES"):
        resource_of("example.com/v1", "Widget")
