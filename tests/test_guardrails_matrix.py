"""The authorization matrix: who may do what in a tenant's namespaces, per demo tier, decided
the way the API server decides, from the objects Berth would apply.

RBAC comes from the rendered plans (RoleBindings of tenant groups and of the GitOps
ServiceAccount) and Berth's ClusterRoles; admission from Berth's policies, evaluated with
cel-python. A request RBAC allows still has to pass admission, as on a real API server.
"""

import copy

import pytest

from provisioning import guardrails
from provisioning.guardrails import bootstrap_objects
from provisioning.plan import (
    GITOPS_SERVICE_ACCOUNT,
    ClusterSpec,
    NamespaceSpec,
    PlanInput,
    TenantSpec,
    TierSpec,
    render,
)
from tenants import demo
from tests.admission_model import admission_request, allowed_by_admission
from tests.rbac_model import Authorizer, Subject

TIERS = ("dev", "staging", "prod", "review")
CLUSTER = ClusterSpec(name="sandbox", argocd_namespace="argocd", has_kargo=True,
                      ingress_namespace="ingress-nginx")


def tier_spec(slug: str) -> TierSpec:
    preset = next(t for t in demo.TIERS if t["slug"] == slug)
    return TierSpec(
        slug=slug, pod_security_level=preset["pod_security_level"],
        network_preset=preset["network_preset"], container_default_cpu_millis=500,
        container_default_memory_mib=512, container_request_cpu_millis=100,
        container_request_memory_mib=128,
        cluster_roles={role: preset[f"{role}_cluster_role"]
                       for role in ("owner", "member", "viewer")},
    )


def tenant_plan(spec: dict, app: str) -> list[dict]:
    tenant = TenantSpec(
        slug=spec["slug"], name=spec["name"],
        groups={"owner": tuple(spec["owner_groups"]), "member": tuple(spec["member_groups"]),
                "viewer": tuple(spec["viewer_groups"])},
        repo_url="https://git.example.com/deploy.git",
        allowed_domains=tuple(spec["allowed_domains"]),
    )
    inputs = PlanInput(
        request_id=1, tenant=tenant, cluster=CLUSTER, engine="argocd_kargo", project=app,
        namespaces=tuple(
            NamespaceSpec(name=f"{spec['slug']}-{app}-{slug}", tier=tier_spec(slug),
                          cpu_millis=1000, memory_mib=1024, storage_gib=1, project=app)
            for slug in TIERS
        ),
    )
    return list(render(inputs).apply)


PAYMENTS, SEARCH = demo.TENANTS
PLANS = tenant_plan(PAYMENTS, "shop") + tenant_plan(SEARCH, "web")
BOOTSTRAP = bootstrap_objects(
    CLUSTER,
    [TenantSpec(slug=t["slug"], name=t["name"], groups={}, repo_url="",
                allowed_domains=tuple(t["allowed_domains"])) for t in demo.TENANTS],
    berth_namespace="berth-system",
)
AUTHZ = Authorizer(PLANS + BOOTSTRAP)
NAMESPACE_LABELS = {o["metadata"]["name"]: o["metadata"]["labels"]
                    for o in PLANS if o["kind"] == "Namespace"}


def planned(kind: str, name: str, namespace: str) -> dict:
    return next(o for o in PLANS if o["kind"] == kind and o["metadata"]["name"] == name
                and o["metadata"].get("namespace", "") == namespace)


# The payments people (groups from tenants/demo.py) and the GitOps identity of a namespace.
PEOPLE = {
    "owner": Subject.user("olivia", *PAYMENTS["owner_groups"]),
    "member": Subject.user("dana", *PAYMENTS["member_groups"]),
    "viewer": Subject.user("val", *PAYMENTS["viewer_groups"]),
}
WHO = ("owner", "member", "viewer", "gitops")

# Which of Berth's roles each of them holds, per demo tier (checked against tenants/demo.py
# below): people write dev, staging and review; in prod only GitOps writes.
HOLDS = {
    "owner": {"dev": "edit", "staging": "edit", "prod": "view", "review": "edit"},
    "member": {"dev": "edit", "staging": "edit", "prod": "view", "review": "edit"},
    "viewer": {"dev": "view", "staging": "view", "prod": "view", "review": "view"},
    "gitops": {"dev": "edit", "staging": "edit", "prod": "edit", "review": "edit"},
}


def deployment(namespace: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {}}}}


def team_policy(namespace: str) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "allow-web", "namespace": namespace},
            "spec": {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]}}


def raised_quota(namespace: str) -> tuple[dict, dict]:
    old = planned("ResourceQuota", "berth-quota", namespace)
    new = copy.deepcopy(old)
    new["spec"]["hard"]["requests.cpu"] = "64"
    return new, old


def changed_limits(namespace: str) -> tuple[dict, dict]:
    old = planned("LimitRange", "berth-limits", namespace)
    new = copy.deepcopy(old)
    new["spec"]["limits"][0]["default"]["cpu"] = "64"
    return new, old


# action → (verb, group, resource, namespace, name, admission (operation, obj, old) or None),
# given the payments namespace of the tier.
ACTIONS = {
    "create Deployment": lambda ns: ("create", "apps", "deployments", ns, "",
                                     ("CREATE", deployment(ns), None)),
    "create Service": lambda ns: ("create", "", "services", ns, "", None),
    "read Secret": lambda ns: ("get", "", "secrets", ns, "db", None),
    "exec into pod": lambda ns: ("create", "", "pods/exec", ns, "web-0", None),
    "add NetworkPolicy": lambda ns: ("create", "networking.k8s.io", "networkpolicies", ns, "",
                                     ("CREATE", team_policy(ns), None)),
    "delete own NetworkPolicy": lambda ns: (
        "delete", "networking.k8s.io", "networkpolicies", ns, "allow-web",
        ("DELETE", None, team_policy(ns))),
    "delete Berth's default deny": lambda ns: (
        "delete", "networking.k8s.io", "networkpolicies", ns, "berth-default-deny",
        ("DELETE", None, planned("NetworkPolicy", "berth-default-deny", ns))),
    "raise ResourceQuota": lambda ns: ("patch", "", "resourcequotas", ns, "berth-quota",
                                       ("UPDATE", *raised_quota(ns))),
    "change LimitRange": lambda ns: ("patch", "", "limitranges", ns, "berth-limits",
                                     ("UPDATE", *changed_limits(ns))),
    "create RoleBinding": lambda ns: ("create", "rbac.authorization.k8s.io", "rolebindings",
                                      ns, "", None),
    "create Role": lambda ns: ("create", "rbac.authorization.k8s.io", "roles", ns, "", None),
    "bind cluster-admin": lambda ns: ("bind", "rbac.authorization.k8s.io", "clusterroles", ns,
                                      "cluster-admin", None),
    "token for berth-gitops": lambda ns: ("create", "", "serviceaccounts/token", ns,
                                          GITOPS_SERVICE_ACCOUNT, None),
    "create AppProject": lambda ns: ("create", "argoproj.io", "appprojects", "argocd", "",
                                     None),
    "create Kargo Project": lambda ns: ("create", "kargo.akuity.io", "projects", "", "", None),
    "Deployment in search's ns": lambda ns: (
        "create", "apps", "deployments", ns.replace("payments-shop", "search-web"), "",
        ("CREATE", deployment(ns.replace("payments-shop", "search-web")), None)),
}

#                                 holding berth-tenant-edit   holding berth-tenant-view
EXPECTED = {
    "create Deployment":            ("allowed",                 "RBAC"),
    "create Service":               ("allowed",                 "RBAC"),
    "read Secret":                  ("allowed",                 "RBAC"),
    "exec into pod":                ("allowed",                 "RBAC"),
    "add NetworkPolicy":            ("allowed",                 "RBAC"),
    "delete own NetworkPolicy":     ("allowed",                 "RBAC"),
    "delete Berth's default deny":  ("admission",               "RBAC"),
    "raise ResourceQuota":          ("RBAC",                    "RBAC"),
    "change LimitRange":            ("RBAC",                    "RBAC"),
    "create RoleBinding":           ("RBAC",                    "RBAC"),
    "create Role":                  ("RBAC",                    "RBAC"),
    "bind cluster-admin":           ("RBAC",                    "RBAC"),
    "token for berth-gitops":       ("RBAC",                    "RBAC"),
    "create AppProject":            ("RBAC",                    "RBAC"),
    "create Kargo Project":         ("RBAC",                    "RBAC"),
    "Deployment in search's ns":    ("RBAC",                    "RBAC"),
}


def subject(who: str, namespace: str) -> Subject:
    if who == "gitops":
        return Subject.service_account(namespace, GITOPS_SERVICE_ACCOUNT)
    return PEOPLE[who]


def decide(who: str, tier: str, action: str) -> str:
    """allowed | RBAC (refused by authorization) | admission (RBAC allowed, a policy refused)."""
    namespace = f"payments-shop-{tier}"
    verb, group, resource, where, name, admission = ACTIONS[action](namespace)
    if not AUTHZ.can_i(subject(who, namespace), verb, group, resource, where, name):
        return "RBAC"
    if admission is not None:
        operation, obj, old = admission
        request = admission_request(operation, user=subject(who, namespace).username,
                                    obj=obj, old=old)
        if not allowed_by_admission(request, BOOTSTRAP, namespaces=NAMESPACE_LABELS).allowed:
            return "admission"
    return "allowed"


CASES = [
    pytest.param(tier, who, action, id=f"{tier}-{who}-{action.lower().replace(' ', '-')}")
    for tier in TIERS for who in WHO for action in ACTIONS
]


@pytest.mark.parametrize(("tier", "who", "action"), CASES)
def test_authorization_matrix(tier, who, action):
    edit, view = EXPECTED[action]
    expected = edit if HOLDS[who][tier] == "edit" else view
    assert decide(who, tier, action) == expected


def test_who_holds_what_is_what_the_demo_tiers_say():
    names = {"edit": "berth-tenant-edit", "view": "berth-tenant-view"}
    for preset in demo.TIERS:
        for who in ("owner", "member", "viewer"):
            assert preset[f"{who}_cluster_role"] == names[HOLDS[who][preset["slug"]]]
    bindings = [o for o in PLANS if o["kind"] == "RoleBinding"
                and o["metadata"]["name"] == GITOPS_SERVICE_ACCOUNT]
    assert len(bindings) == 8  # two tenants, four tiers
    assert {b["roleRef"]["name"] for b in bindings} == {names["edit"]}


def test_berth_itself_may_change_what_it_protects():
    namespace = "payments-shop-prod"
    old = planned("NetworkPolicy", "berth-default-deny", namespace)
    request = admission_request("DELETE", user=guardrails.berth_username("berth-system"),
                                old=old)
    assert allowed_by_admission(request, BOOTSTRAP, namespaces=NAMESPACE_LABELS).allowed


def test_the_matrix_covers_every_action_and_tier():
    assert set(EXPECTED) == set(ACTIONS)
    assert len(CASES) == len(TIERS) * len(WHO) * len(ACTIONS)
