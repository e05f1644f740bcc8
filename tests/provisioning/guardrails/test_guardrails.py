"""Berth's guardrails as data: the roles it ships, what a tenant's repository cannot do, the
cluster bootstrap, and the checks every plan passes before anything is applied."""

import copy
import itertools

import pytest

from kubesandbox.testing import upstream_crds
from provisioning import guardrails
from provisioning.guardrails import (
    EDIT_RULES,
    PROTECTED_RESOURCES,
    ROOT_RESOURCES,
    VIEW_RULES,
    appproject_permits,
    bootstrap_objects,
    describe_role,
)
from provisioning.plan import (
    ARGOCD,
    FLUX,
    GITOPS_SERVICE_ACCOUNT,
    MANAGED_BY,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
    ClusterSpec,
    KargoProject,
    NamespaceSpec,
    PlanInput,
    RepoCredential,
    TenantSpec,
    TierSpec,
    render,
)
from provisioning.schema import validate_objects
from provisioning.validation import validate_plan
from tests.support.authz import LiveCluster, Subject, resource_of

CLUSTER = ClusterSpec(
    name="sandbox", argocd_namespace="argocd", has_kargo=True, ingress_namespace="ingress-nginx"
)
TENANT = TenantSpec(
    slug="payments",
    name="Payments",
    groups={"owner": ("payments-owners",), "member": ("payments-devs",), "viewer": ()},
    repo_url="https://git.example.com/payments.git",
    allowed_domains=("payments.example.com",),
    credential=RepoCredential(transport="https", username="bot", password="s3cr3t-token"),
)
TIER = TierSpec(
    slug="dev",
    pod_security_level="restricted",
    network_preset="ingress",
    container_default_cpu_millis=500,
    container_default_memory_mib=512,
    container_request_cpu_millis=100,
    container_request_memory_mib=128,
    cluster_roles={
        "owner": TENANT_EDIT_ROLE,
        "member": TENANT_EDIT_ROLE,
        "viewer": TENANT_VIEW_ROLE,
    },
)


def inputs(engine: str = "argocd_kargo", tier: TierSpec = TIER, **cluster) -> PlanInput:
    """A project's plan with everything of the tenant's on the cluster: its roots and
    credentials, and (on Argo CD + Kargo) the Kargo side."""
    kargo = (KargoProject("shop", "payments-shop-kargo", (tier,)),)
    return PlanInput(
        request_id=7,
        tenant=TENANT,
        cluster=ClusterSpec(**{**vars(CLUSTER), **cluster}),
        engine=engine,
        project="shop",
        namespaces=(NamespaceSpec("payments-shop-dev", tier, 1000, 1024, 1, project="shop"),),
        tenant_engines=frozenset({FLUX if engine == "flux" else ARGOCD}),
        kargo_projects=kargo if engine == "argocd_kargo" else (),
    )


BOOTSTRAP = bootstrap_objects(CLUSTER, berth_namespace="berth-system")
NAMESPACE = "payments-shop-dev"
GITOPS = Subject.service_account(NAMESPACE, GITOPS_SERVICE_ACCOUNT)


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


# --- the roles ---------------------------------------------------------------------------


def test_the_roles_spell_out_every_group_resource_and_verb():
    for rule in (*EDIT_RULES, *VIEW_RULES):
        for field in ("apiGroups", "resources", "verbs"):
            assert rule[field] and not any("*" in item for item in rule[field]), rule
        assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"]), rule


# Kubernetes 1.30's edit role (system:aggregate-to-edit + system:aggregate-to-view), without
# the `extensions` group: (group, resource) → verbs. From
# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/cluster-roles.yaml.
READ, WRITE = {"get", "list", "watch"}, {"create", "delete", "deletecollection", "patch", "update"}
KUBERNETES_EDIT = {}
for group, resources, verbs in [
    (
        "",
        ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"],
        READ,
    ),
    ("", ["serviceaccounts"], {"impersonate"}),
    ("", ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], WRITE),
    ("", ["pods/eviction", "serviceaccounts/token"], {"create"}),
    (
        "",
        [
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ],
        WRITE,
    ),
    (
        "apps",
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
        WRITE,
    ),
    ("autoscaling", ["horizontalpodautoscalers"], WRITE),
    ("batch", ["cronjobs", "jobs"], WRITE),
    ("policy", ["poddisruptionbudgets"], WRITE),
    ("networking.k8s.io", ["ingresses", "networkpolicies"], WRITE),
    ("coordination.k8s.io", ["leases"], READ | WRITE),
    (
        "",
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
            "namespaces",
        ],
        READ,
    ),
    ("discovery.k8s.io", ["endpointslices"], READ),
    (
        "apps",
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
        READ,
    ),
    ("autoscaling", ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], READ),
    ("batch", ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
    ("policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
    ("networking.k8s.io", ["ingresses", "ingresses/status", "networkpolicies"], READ),
]:
    for resource in resources:
        KUBERNETES_EDIT.setdefault((group, resource), set()).update(verbs)


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
    kubernetes = {(g, r, v) for (g, r), verbs in KUBERNETES_EDIT.items() for v in verbs}
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


# --- what a tenant's repository cannot do ------------------------------------------------


def project() -> dict:
    (appproject,) = [o for o in render(inputs()).apply if o["kind"] == "AppProject"]
    return appproject


@pytest.fixture(scope="module")
def gitops_rbac():
    """An API server holding a tenant's plan and the guardrails, asked about the GitOps
    identity of payments-shop-dev."""
    cluster = LiveCluster(
        [*render(inputs()).apply, *BOOTSTRAP],
        crds=upstream_crds(),
        namespaces=("argocd", "kargo", "berth-system"),
    )
    yield cluster
    cluster.close()


@pytest.mark.crds  # the guardrails' API server serves the upstream CRDs
@pytest.mark.parametrize(
    ("api_version", "kind", "namespaced"),
    [
        ("argoproj.io/v1alpha1", "AppProject", True),
        ("kargo.akuity.io/v1alpha1", "Project", False),
        ("kargo.akuity.io/v1alpha1", "ProjectConfig", True),
        ("rbac.authorization.k8s.io/v1", "RoleBinding", True),
        ("rbac.authorization.k8s.io/v1", "Role", True),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", False),
        ("v1", "ResourceQuota", True),
        ("v1", "LimitRange", True),
        ("v1", "Namespace", False),
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", False),
    ],
    ids=lambda value: value if isinstance(value, str) and "/" not in value else None,
)
def test_a_guardrail_object_committed_to_the_tenants_repo_cannot_take_effect(
    gitops_rbac, api_version, kind, namespaced
):
    group, resource = resource_of(api_version, kind)
    # Argo CD refuses to sync it into any of the tenant's namespaces...
    assert not appproject_permits(project(), group, kind, namespaced=namespaced)
    # ...and Flux, or Argo CD impersonating, acts as the namespace's berth-gitops, which may
    # not create or change it either.
    where = NAMESPACE if namespaced else ""
    for verb in ("create", "update", "patch"):
        assert not gitops_rbac.can_i(GITOPS, verb, group, resource, where, "x"), verb


@pytest.mark.crds  # the guardrails' API server serves the upstream CRDs
@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("apps/v1", "Deployment"),
        ("v1", "Service"),
        ("v1", "ConfigMap"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "Ingress"),
    ],
)
def test_what_a_team_deploys_takes_effect(gitops_rbac, api_version, kind):
    group, resource = resource_of(api_version, kind)
    assert appproject_permits(project(), group, kind)
    assert gitops_rbac.can_i(GITOPS, "create", group, resource, NAMESPACE)


def test_argo_cd_project_rules_match_like_argo_cd():
    whitelist_all = {"spec": {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}}
    assert appproject_permits(whitelist_all, "kargo.akuity.io", "Project", namespaced=False)
    assert appproject_permits({"spec": {}}, "", "ConfigMap")  # no whitelist: all namespaced
    only_apps = {"spec": {"namespaceResourceWhitelist": [{"group": "apps", "kind": "*"}]}}
    assert appproject_permits(only_apps, "apps", "Deployment")
    assert not appproject_permits(only_apps, "", "Secret")
    assert not appproject_permits({"spec": {"namespaceResourceWhitelist": []}}, "", "Secret")


# --- bootstrap ---------------------------------------------------------------------------


def test_bootstrap_objects_validate_against_the_kubernetes_schema():
    assert validate_objects(BOOTSTRAP) == {}
    kinds = [o["kind"] for o in BOOTSTRAP]
    assert kinds.count("ClusterRole") == 4  # the tenant's two, and the GitOps roots' two
    # Each policy is created before its bindings.
    assert kinds.index("ValidatingAdmissionPolicyBinding") > max(
        i for i, kind in enumerate(kinds) if kind == "ValidatingAdmissionPolicy"
    )


def test_bootstrap_is_the_same_whatever_the_tenants():
    """Parameters are read in the request's namespace, where each tenant namespace's bundle
    put them: no binding names a tenant, so onboarding needs no second install."""
    bindings = {
        o["metadata"]["name"]: o["spec"]
        for o in BOOTSTRAP
        if o["kind"] == "ValidatingAdmissionPolicyBinding"
    }
    assert bindings["berth-ingress-domains"] == {
        "policyName": "berth-ingress-domains",
        "validationActions": ["Deny"],
        "paramRef": {"name": "berth-allowed-domains", "parameterNotFoundAction": "Deny"},
        "matchResources": {
            "namespaceSelector": {
                "matchExpressions": [{"key": "berth.dev/tenant", "operator": "Exists"}]
            }
        },
    }
    assert bindings["berth-flux-tenancy"]["paramRef"]["name"] == "berth-gitops-sources"
    assert "matchResources" not in bindings["berth-protect-managed"]
    assert not any("payments" in str(obj) for obj in BOOTSTRAP)


def test_each_namespace_carries_its_tenants_domains():
    (domains,) = [
        o
        for o in render(inputs()).apply
        if o["kind"] == "ConfigMap" and o["metadata"]["namespace"] == NAMESPACE
    ]
    assert domains["metadata"]["name"] == "berth-allowed-domains"
    assert domains["data"] == {"payments.example.com": "allowed"}


def test_everything_berth_labels_as_its_own_is_in_the_protect_policys_scope():
    protected = {
        (group, resource)
        for group, _, resources in (*PROTECTED_RESOURCES, *ROOT_RESOURCES)
        for resource in resources
    }
    labelled = [
        obj for engine in ("argocd", "argocd_kargo", "flux") for obj in render(inputs(engine)).apply
    ] + [obj for obj in BOOTSTRAP if obj["metadata"].get("labels", {}).get(MANAGED_BY)]
    for obj in labelled:
        assert obj["metadata"]["labels"][MANAGED_BY] == "berth"
        if obj["kind"].startswith("ValidatingAdmissionPolicy"):
            continue  # the API server never sends admission objects through admission
        assert resource_of(obj["apiVersion"], obj["kind"]) in protected, obj["kind"]


# --- validate before create --------------------------------------------------------------


def rolebinding(role="berth-tenant-edit", subject=None, namespace=NAMESPACE) -> dict:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": "extra",
            "namespace": namespace,
            "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [
            subject
            or {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "payments-devs"}
        ],
    }


def labelled(obj: dict) -> dict:
    obj["metadata"]["labels"] = {MANAGED_BY: "berth", "berth.dev/tenant": "payments"}
    return obj


def with_object(obj: dict, given: PlanInput | None = None):
    given = given or inputs()
    plan = render(given)
    return plan.__class__(apply=(*plan.apply, obj), delete=plan.delete), given


@pytest.mark.parametrize("engine", ["argocd", "argocd_kargo", "flux"])
def test_a_rendered_plan_passes(engine):
    assert validate_plan(render(inputs(engine)), inputs(engine)) == {}


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        pytest.param(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {
                    "name": "payments-admin",
                    "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
                },
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "cluster-admin",
                },
                "subjects": [
                    {
                        "kind": "Group",
                        "name": "payments-devs",
                        "apiGroup": "rbac.authorization.k8s.io",
                    }
                ],
            },
            "never holds a ClusterRoleBinding",
            id="cluster-role-binding",
        ),
        pytest.param(
            rolebinding("edit"), "binds edit, which may delete or rewrite", id="kubernetes-edit"
        ),
        pytest.param(rolebinding("admin"), "may write Roles and RoleBindings", id="admin"),
        pytest.param(
            rolebinding("some-other-role"),
            "neither a tier's role nor one of Berth's",
            id="unknown-role",
        ),
        pytest.param(
            rolebinding(
                subject={
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Group",
                    "name": "system:authenticated",
                }
            ),
            "grants group system:authenticated",
            id="everyone",
        ),
        pytest.param(
            rolebinding(
                subject={
                    "kind": "ServiceAccount",
                    "name": "berth-gitops",
                    "namespace": "search-web-dev",
                }
            ),
            "only the namespace's own berth-gitops",
            id="other-tenants-service-account",
        ),
        pytest.param(
            rolebinding(namespace="search-web-dev"),
            "namespace search-web-dev is outside the tenant's prefix payments-",
            id="other-tenants-namespace",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "x", "namespace": NAMESPACE},
            },
            "never holds a Deployment",
            id="unexpected-kind",
        ),
        pytest.param(
            labelled(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "x", "namespace": NAMESPACE},
                }
            ),
            "Berth applies only berth-allowed-domains",
            id="another-config-map",
        ),
        pytest.param(
            labelled(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": "berth-repo-credentials", "namespace": NAMESPACE},
                }
            ),
            "repository credentials are berth-repo-credentials in the tenant's GitOps "
            "or Kargo namespace",
            id="credentials-in-a-workload-namespace",
        ),
        pytest.param(
            labelled(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": "argocd-secret", "namespace": "argocd"},
                }
            ),
            "Berth writes only berth-repo-payments",
            id="argocds-own-secret",
        ),
        pytest.param(
            labelled(
                {
                    "apiVersion": "argoproj.io/v1alpha1",
                    "kind": "Application",
                    "metadata": {"name": "sneaky", "namespace": "payments-apps"},
                    "spec": {},
                }
            ),
            "Berth applies only the root payments-apps/berth-root",
            id="another-app",
        ),
        pytest.param(
            labelled(
                {
                    "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                    "kind": "Kustomization",
                    "metadata": {"name": "berth-root", "namespace": "payments-gitops"},
                    "spec": {
                        "interval": "1m",
                        "prune": True,
                        "sourceRef": {"kind": "GitRepository", "name": "payments"},
                        "targetNamespace": "payments-gitops",
                    },
                }
            ),
            "as berth-reconciler",
            id="root-kustomization-without-the-reconciler",
        ),
        pytest.param(
            labelled(
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "Role",
                    "metadata": {
                        "name": "berth-members-promote",
                        "namespace": "payments-shop-kargo",
                    },
                    "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
                }
            ),
            "only Roles let people promote",
            id="a-role-that-reads-secrets",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {
                    "name": "more",
                    "namespace": NAMESPACE,
                    "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
                },
                "spec": {"hard": {"requests.cpu": 64}},
            },
            'schema: spec.hard["requests.cpu"]: expected string',
            id="schema-error",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "unlabelled", "namespace": NAMESPACE},
            },
            "not labelled as Berth's",
            id="unlabelled",
        ),
    ],
)
def test_validate_plan_finds(obj, reason):
    plan, given = with_object(obj)
    problems = validate_plan(plan, given)
    assert len(problems) == 1
    ((key, found),) = problems.items()
    assert any(reason in message for message in found), found


def test_validate_plan_refuses_a_tier_bound_to_kubernetes_edit():
    leaky = TierSpec(
        **{**vars(TIER), "cluster_roles": {"owner": "admin", "member": "edit", "viewer": "view"}}
    )
    problems = validate_plan(render(inputs(tier=leaky)), inputs(tier=leaky))
    assert set(problems) == {
        "RoleBinding/payments-shop-dev/berth-owners",
        "RoleBinding/payments-shop-dev/berth-members",
    }


def test_validate_plan_checks_the_appproject():
    loose = copy.deepcopy(project())
    loose["spec"]["namespaceResourceBlacklist"] = []
    loose["spec"]["clusterResourceWhitelist"] = [{"group": "*", "kind": "*"}]
    loose["spec"]["destinations"].append(
        {"server": "https://kubernetes.default.svc", "namespace": "kube-system"}
    )
    plan = render(inputs())
    plan = plan.__class__(
        apply=tuple(loose if o["kind"] == "AppProject" else o for o in plan.apply)
    )
    (found,) = validate_plan(plan, inputs()).values()
    assert "lets the tenant's Applications deploy ResourceQuota (core)" in found
    assert "lets the tenant's Applications deploy cluster-scoped resources" in found
    assert "destination namespace 'kube-system' is outside payments-*" in found


def test_without_crds_custom_kinds_are_skipped_but_built_in_ones_still_checked(tmp_path):
    plan, given = with_object(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {
                "name": "x",
                "namespace": NAMESPACE,
                "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
            },
            "spec": {"limits": "none"},
        }
    )
    problems = validate_plan(plan, given, crd_dir=str(tmp_path / "missing"))
    assert list(problems) == ["LimitRange/payments-shop-dev/x"]


@pytest.mark.crds
def test_custom_kinds_are_checked_against_their_crds():
    plan, given = with_object(
        {
            "apiVersion": "kargo.akuity.io/v1alpha1",
            "kind": "ProjectConfig",
            "metadata": {
                "name": "payments-shop-kargo",
                "namespace": "payments-shop-kargo",
                "labels": {MANAGED_BY: "berth", "berth.dev/tenant": "payments"},
            },
            "spec": {"promotionPolicies": "all"},
        }
    )
    (found,) = validate_plan(plan, given).values()
    assert any(message.startswith("schema: spec.promotionPolicies") for message in found)


def test_deletes_stay_within_the_tenant():
    plan = render(
        PlanInput(
            request_id=1,
            tenant=TENANT,
            cluster=CLUSTER,
            engine="flux",
            remove_namespaces=("search-web-dev",),
        )
    )
    ((key, (message,)),) = validate_plan(plan, inputs("flux")).items()
    assert key == "Namespace/search-web-dev"
    assert message.startswith("a tenant's plan deletes only namespaces named payments-*")


def test_guardrail_kinds_and_plan_kinds_agree():
    rendered = {
        resource_of(o["apiVersion"], o["kind"])[0:1] + (o["kind"],)
        for o in itertools.chain.from_iterable(
            render(inputs(engine)).apply for engine in ("argocd", "argocd_kargo", "flux")
        )
    }
    assert rendered == guardrails.PLAN_KINDS
