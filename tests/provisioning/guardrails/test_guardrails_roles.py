"""Berth's guardrails as data: the roles it ships. Each is spelled out, checked against
Kubernetes' own edit role, and asked of an API server (RBAC) to hold what its summary
says."""

from pathlib import Path

import pytest
import yaml

from provisioning import guardrails
from provisioning.guardrails import EDIT_RULES, VIEW_RULES, describe_role
from provisioning.plan import TENANT_EDIT_ROLE, TENANT_VIEW_ROLE
from tests.support.authz import LiveCluster, Subject
from tests.support.guardrails import NAMESPACE


def bound(role: str) -> LiveCluster:
    """An API server holding Berth's ClusterRoles, and `someone` bound to one of them in
    payments-shop-dev: what it answers is what Kubernetes' RBAC makes of the role."""
    return LiveCluster(
        [
            *guardrails.cluster_roles(),
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "x", "namespace": NAMESPACE},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role,
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "someone"}
                ],
            },
        ],
        namespaces=(NAMESPACE,),
    )


SOMEONE = Subject.user("someone")


@pytest.fixture(scope="module")
def edit():
    cluster = bound(TENANT_EDIT_ROLE)
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def view():
    cluster = bound(TENANT_VIEW_ROLE)
    yield cluster
    cluster.close()


def test_the_roles_spell_out_every_group_resource_and_verb():
    for rule in (*EDIT_RULES, *VIEW_RULES):
        for field in ("apiGroups", "resources", "verbs"):
            assert rule[field] and not any("*" in item for item in rule[field]), rule
        assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"]), rule


READ, WRITE = {"get", "list", "watch"}, {"create", "delete", "deletecollection", "patch", "update"}
# Kubernetes' own edit role, as an API server aggregates it.
KUBERNETES_EDIT = yaml.safe_load(
    (Path(__file__).parents[2] / "support" / "kubernetes-edit-role.yaml").read_text()
)["rules"]


def grants(rules) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


# What Berth adds to Kubernetes' roles: reading RBAC and events.k8s.io, and cert-manager.
BERTH_ADDITIONS = {"rbac.authorization.k8s.io", "events.k8s.io", "cert-manager.io"}


def test_berth_tenant_edit_is_kubernetes_edit_minus_what_widens_rights():
    kubernetes = grants(KUBERNETES_EDIT)
    berth = {grant for grant in grants(EDIT_RULES) if grant[0] not in BERTH_ADDITIONS}
    assert berth <= kubernetes
    assert kubernetes - berth == {
        ("", "serviceaccounts", "impersonate"),
        ("", "serviceaccounts/token", "create"),
        ("networking.k8s.io", "networkpolicies", "deletecollection"),
        *{("", "events", verb) for verb in WRITE},
        *{("apps", "deployments/rollback", verb) for verb in WRITE},  # gone since apps/v1
        ("", "bindings", "get"),
        ("", "bindings", "list"),
        ("", "bindings", "watch"),
        # exec/attach/port-forward need get and create; listing or rewriting them means nothing
        *{
            ("", sub, verb)
            for sub in ("pods/attach", "pods/exec", "pods/portforward")
            for verb in ("list", "watch", "delete", "deletecollection", "patch", "update")
        },
        *{
            ("", sub, verb)
            for sub in ("pods/proxy", "services/proxy")
            for verb in ("list", "watch", "deletecollection")
        },
    }
    assert {(g, r, v) for g, r, v in grants(EDIT_RULES) if g == "rbac.authorization.k8s.io"} == {
        ("rbac.authorization.k8s.io", r, v) for r in ("roles", "rolebindings") for v in READ
    }


@pytest.mark.parametrize(
    ("verb", "group", "resource"),
    [(verb, "", "resourcequotas") for verb in sorted(WRITE)]
    + [(verb, "", "limitranges") for verb in sorted(WRITE)]
    + [
        (verb, "rbac.authorization.k8s.io", resource)
        for verb in sorted(WRITE)
        for resource in ("roles", "rolebindings", "clusterroles", "clusterrolebindings")
    ]
    + [
        ("bind", "rbac.authorization.k8s.io", "clusterroles"),
        ("escalate", "rbac.authorization.k8s.io", "roles"),
        ("impersonate", "", "serviceaccounts"),
        ("impersonate", "", "users"),
        ("impersonate", "", "groups"),
        ("create", "", "serviceaccounts/token"),
        ("deletecollection", "networking.k8s.io", "networkpolicies"),
        ("update", "", "resourcequotas/status"),
        ("update", "", "namespaces"),
        ("create", "argoproj.io", "appprojects"),
        ("create", "argoproj.io", "applications"),
        ("create", "kargo.akuity.io", "projectconfigs"),
        ("create", "kargo.akuity.io", "stages"),
    ],
    ids=lambda value: value.replace("/", "-") if isinstance(value, str) else value,
)
def test_berth_tenant_edit_never_grants(edit, verb, group, resource):
    assert not edit.can_i(SOMEONE, verb, group, resource, NAMESPACE, "anything")


def test_the_edit_summary_says_what_the_role_does(edit):
    # "deploy and change workloads, Services, Ingresses, ConfigMaps and Secrets"
    for group, resource in [
        ("apps", "deployments"),
        ("apps", "statefulsets"),
        ("batch", "jobs"),
        ("", "services"),
        ("networking.k8s.io", "ingresses"),
        ("", "configmaps"),
        ("", "secrets"),
    ]:
        for verb in ("create", "update", "patch", "delete"):
            assert edit.can_i(SOMEONE, verb, group, resource, NAMESPACE, "x"), (verb, resource)
    # "exec into pods and add their own NetworkPolicies"
    assert edit.can_i(SOMEONE, "create", "", "pods/exec", NAMESPACE, "web-0")
    assert edit.can_i(SOMEONE, "create", "networking.k8s.io", "networkpolicies", NAMESPACE)
    # "read quota, limits and RBAC but not change them"
    for group, resource in [
        ("", "resourcequotas"),
        ("", "limitranges"),
        ("rbac.authorization.k8s.io", "rolebindings"),
    ]:
        assert edit.can_i(SOMEONE, "get", group, resource, NAMESPACE, "x")
        assert not edit.can_i(SOMEONE, "patch", group, resource, NAMESPACE, "x")


def test_the_view_summary_says_what_the_role_does(view):
    # "read everything except Secrets"
    for group, resource in [
        ("", "pods"),
        ("", "pods/log"),
        ("apps", "deployments"),
        ("", "configmaps"),
        ("", "services"),
        ("", "resourcequotas"),
        ("networking.k8s.io", "networkpolicies"),
        ("networking.k8s.io", "ingresses"),
        ("", "events"),
    ]:
        assert view.can_i(SOMEONE, "get", group, resource, NAMESPACE, "x"), resource
    assert not view.can_i(SOMEONE, "get", "", "secrets", NAMESPACE, "x")
    assert not view.can_i(SOMEONE, "create", "", "pods/exec", NAMESPACE, "x")
    # "change nothing"
    assert {verb for _, _, verb in grants(VIEW_RULES)} == READ


@pytest.mark.parametrize(
    ("role", "words"),
    [
        (TENANT_EDIT_ROLE, "deploy and change workloads"),
        (TENANT_VIEW_ROLE, "read everything except Secrets; change nothing"),
        ("edit", "Berth refuses to provision with it"),
        ("cluster-admin", "raising its own ResourceQuota"),
        ("team-reader", "not one of Berth's roles"),
    ],
)
def test_describe_role(role, words):
    assert words in describe_role(role)
