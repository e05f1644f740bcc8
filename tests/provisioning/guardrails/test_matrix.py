"""The authorization matrix: who may do what in a tenant's namespaces, per demo tier, asked
of an API server (the stand-in) holding the objects Berth applies: the rendered plans
(namespaces, quotas, policies, RoleBindings of the tenant's groups and its GitOps
ServiceAccount) and the guardrails (Berth's ClusterRoles and admission policies).

Each case is the request itself, made as the person or the GitOps identity (impersonation;
writes dry-run), so RBAC decides first and admission second, as on a real cluster. Asking
for a token or an exec, which are not stored objects, is a SubjectAccessReview.
"""

import copy

import pytest

from kubesandbox.testing import upstream_crds
from provisioning import guardrails
from provisioning.guardrails import bootstrap_objects
from provisioning.plan import (
    ARGOCD,
    GITOPS_SERVICE_ACCOUNT,
    ClusterSpec,
    KargoProject,
    PlanInput,
    TenantSpec,
    TierSpec,
    render,
)
from tenants import demo
from tests.support.authz import LiveCluster, Subject, path_of
from tests.support.guardrails import web_deployment
from tests.support.plan_inputs import namespace_spec

TIERS = ("dev", "staging", "prod", "review")
CLUSTER = ClusterSpec(
    name="sandbox", argocd_namespace="argocd", has_kargo=True, ingress_namespace="ingress-nginx"
)


def tier_spec(slug: str) -> TierSpec:
    preset = next(t for t in demo.TIERS if t["slug"] == slug)
    return TierSpec(
        slug=slug,
        pod_security_level=preset["pod_security_level"],
        network_preset=preset["network_preset"],
        container_default_cpu_millis=500,
        container_default_memory_mib=512,
        container_request_cpu_millis=100,
        container_request_memory_mib=128,
        cluster_roles={
            role: preset[f"{role}_cluster_role"] for role in ("owner", "member", "viewer")
        },
    )


def tenant_plan(spec: dict, app: str) -> list[dict]:
    tenant = TenantSpec(
        slug=spec["slug"],
        name=spec["name"],
        groups={
            "owner": tuple(spec["owner_groups"]),
            "member": tuple(spec["member_groups"]),
            "viewer": tuple(spec["viewer_groups"]),
        },
        repo_url="https://git.example.com/deploy.git",
        allowed_domains=tuple(spec["allowed_domains"]),
    )
    inputs = PlanInput(
        request_id=1,
        tenant=tenant,
        cluster=CLUSTER,
        engine="argocd_kargo",
        project=app,
        namespaces=tuple(
            namespace_spec(
                f"{spec['slug']}-{app}-{slug}", tier_spec(slug), storage_gib=1, project=app
            )
            for slug in TIERS
        ),
        tenant_engines=frozenset({ARGOCD}),
        kargo_projects=(
            KargoProject(
                app, f"{spec['slug']}-{app}-kargo", tuple(tier_spec(slug) for slug in TIERS)
            ),
        ),
    )
    return list(render(inputs).apply)


PAYMENTS, SEARCH = demo.TENANTS
PLANS = tenant_plan(PAYMENTS, "shop") + tenant_plan(SEARCH, "web")
BOOTSTRAP = bootstrap_objects(CLUSTER, berth_namespace="berth-system")


@pytest.fixture(scope="module")
def cluster():
    team_policies = [
        team_policy(o["metadata"]["name"])
        for o in PLANS
        if o["kind"] == "Namespace" and o["metadata"]["name"].startswith("payments-")
    ]
    live = LiveCluster(
        [*BOOTSTRAP, *PLANS, *team_policies],
        crds=upstream_crds(),
        namespaces=("argocd", "kargo", "berth-system"),
    )
    yield live
    live.close()


def planned(kind: str, name: str, namespace: str) -> dict:
    return next(
        o
        for o in PLANS
        if o["kind"] == kind
        and o["metadata"]["name"] == name
        and o["metadata"].get("namespace", "") == namespace
    )


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


def team_policy(namespace: str) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-web", "namespace": namespace},
        "spec": {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]},
    }


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


# action → the request it is, given the payments namespace of the tier: ("request", method,
# path, body) or, for what is not a stored object, ("ask", verb, group, resource, ns, name).
def patch(obj: dict) -> tuple:
    return ("request", "PUT", path_of(obj), obj)


ACTIONS = {
    "create Deployment": lambda ns: (
        "request",
        "POST",
        path_of(web_deployment(ns), named=False),
        web_deployment(ns),
    ),
    "create Service": lambda ns: (
        "request",
        "POST",
        f"/api/v1/namespaces/{ns}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"ports": [{"port": 80}]},
        },
    ),
    "read Secret": lambda ns: ("ask", "get", "", "secrets", ns, "db"),
    "exec into pod": lambda ns: ("ask", "create", "", "pods/exec", ns, "web-0"),
    "add NetworkPolicy": lambda ns: (
        "request",
        "POST",
        path_of(team_policy(ns), named=False),
        {**team_policy(ns), "metadata": {"name": "allow-more", "namespace": ns}},
    ),
    "delete own NetworkPolicy": lambda ns: ("request", "DELETE", path_of(team_policy(ns)), None),
    "delete Berth's default deny": lambda ns: (
        "request",
        "DELETE",
        path_of(planned("NetworkPolicy", "berth-default-deny", ns)),
        None,
    ),
    "raise ResourceQuota": lambda ns: patch(raised_quota(ns)[0]),
    "change LimitRange": lambda ns: patch(changed_limits(ns)[0]),
    "create RoleBinding": lambda ns: (
        "request",
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        role_binding(ns, "berth-tenant-view"),
    ),
    "create Role": lambda ns: (
        "request",
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "mine", "namespace": ns},
            "rules": [],
        },
    ),
    "bind cluster-admin": lambda ns: (
        "request",
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        role_binding(ns, "cluster-admin"),
    ),
    "token for berth-gitops": lambda ns: (
        "ask",
        "create",
        "",
        "serviceaccounts/token",
        ns,
        GITOPS_SERVICE_ACCOUNT,
    ),
    "create AppProject": lambda ns: (
        "request",
        "POST",
        "/apis/argoproj.io/v1alpha1/namespaces/argocd/appprojects",
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "mine", "namespace": "argocd"},
            "spec": {},
        },
    ),
    "create Kargo Project": lambda ns: ("ask", "create", "kargo.akuity.io", "projects", "", ""),
    "read the repository credential": lambda ns: (
        "ask",
        "get",
        "",
        "secrets",
        ns.rsplit("-", 1)[0] + "-kargo",
        "berth-repo-credentials",
    ),
    "create a Flux Kustomization": lambda ns: (
        "ask",
        "create",
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        ns,
        "",
    ),
    "Deployment in search's ns": lambda ns: (
        "request",
        "POST",
        path_of(web_deployment(ns.replace("payments-shop", "search-web")), named=False),
        web_deployment(ns.replace("payments-shop", "search-web")),
    ),
}


def role_binding(namespace: str, role: str) -> dict:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "mine", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "everyone-i-know"}
        ],
    }


#                                 holding berth-tenant-edit   holding berth-tenant-view
EXPECTED = {
    "create Deployment": ("allowed", "RBAC"),
    "create Service": ("allowed", "RBAC"),
    "read Secret": ("allowed", "RBAC"),
    "exec into pod": ("allowed", "RBAC"),
    "add NetworkPolicy": ("allowed", "RBAC"),
    "delete own NetworkPolicy": ("allowed", "RBAC"),
    "delete Berth's default deny": ("admission", "RBAC"),
    "raise ResourceQuota": ("RBAC", "RBAC"),
    "change LimitRange": ("RBAC", "RBAC"),
    "create RoleBinding": ("RBAC", "RBAC"),
    "create Role": ("RBAC", "RBAC"),
    "bind cluster-admin": ("RBAC", "RBAC"),
    "token for berth-gitops": ("RBAC", "RBAC"),
    "create AppProject": ("RBAC", "RBAC"),
    "create Kargo Project": ("RBAC", "RBAC"),
    "read the repository credential": ("RBAC", "RBAC"),
    "create a Flux Kustomization": ("RBAC", "RBAC"),
    "Deployment in search's ns": ("RBAC", "RBAC"),
}


def subject(who: str, namespace: str) -> Subject:
    if who == "gitops":
        return Subject.service_account(namespace, GITOPS_SERVICE_ACCOUNT)
    return PEOPLE[who]


def decide(cluster: LiveCluster, who: str, tier: str, action: str) -> str:
    """allowed | RBAC (refused by authorization) | admission (RBAC allowed, a policy refused)."""
    namespace = f"payments-shop-{tier}"
    kind, *call = ACTIONS[action](namespace)
    if kind == "ask":
        return "allowed" if cluster.can_i(subject(who, namespace), *call) else "RBAC"
    return cluster.attempt(subject(who, namespace), *call)[0]


CASES = [
    pytest.param(tier, who, action, id=f"{tier}-{who}-{action.lower().replace(' ', '-')}")
    for tier in TIERS
    for who in WHO
    for action in ACTIONS
]


@pytest.mark.parametrize(("tier", "who", "action"), CASES)
def test_authorization_matrix(cluster, tier, who, action):
    edit, view = EXPECTED[action]
    expected = edit if HOLDS[who][tier] == "edit" else view
    assert decide(cluster, who, tier, action) == expected


def test_who_holds_what_is_what_the_demo_tiers_say():
    names = {"edit": "berth-tenant-edit", "view": "berth-tenant-view"}
    for preset in demo.TIERS:
        for who in ("owner", "member", "viewer"):
            assert preset[f"{who}_cluster_role"] == names[HOLDS[who][preset["slug"]]]
    bindings = [
        o
        for o in PLANS
        if o["kind"] == "RoleBinding" and o["metadata"]["name"] == GITOPS_SERVICE_ACCOUNT
    ]
    assert len(bindings) == 8  # two tenants, four tiers
    assert {b["roleRef"]["name"] for b in bindings} == {names["edit"]}


def test_berth_itself_may_change_what_it_protects(cluster):
    berth = Subject.service_account("berth-system", "berth")
    cluster.sandbox.upsert(
        {  # Berth's own rights, as the chart grants them
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "berth-test-writes"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "berth", "namespace": "berth-system"}],
        }
    )
    policy = planned("NetworkPolicy", "berth-default-deny", "payments-shop-prod")
    assert cluster.attempt(berth, "DELETE", path_of(policy)) == ("allowed", "")
    assert guardrails.berth_username("berth-system") == berth.username


def test_the_matrix_covers_every_action_and_tier():
    assert set(EXPECTED) == set(ACTIONS)
    assert len(CASES) == len(TIERS) * len(WHO) * len(ACTIONS)
