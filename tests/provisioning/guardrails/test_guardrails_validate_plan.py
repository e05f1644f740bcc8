"""Berth's guardrails as data: the checks every plan passes before anything is applied
(validate before create). A rendered plan passes; an object the tenant's plan never holds,
a binding that widens rights, a loose AppProject, a schema error or a delete outside the
tenant is found."""

import copy
import itertools

import pytest

from provisioning import guardrails
from provisioning.plan import MANAGED_BY, PlanInput, TierSpec, render
from provisioning.validation import validate_plan
from tests.support.authz import resource_of
from tests.support.guardrails import CLUSTER, NAMESPACE, TENANT, TIER, inputs, project


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


def manifest(api_version: str, kind: str, name: str, namespace: str = NAMESPACE) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
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
            manifest("apps/v1", "Deployment", "x"),
            "never holds a Deployment",
            id="unexpected-kind",
        ),
        pytest.param(
            labelled(manifest("v1", "ConfigMap", "x")),
            "Berth applies only berth-allowed-domains",
            id="another-config-map",
        ),
        pytest.param(
            labelled(manifest("v1", "Secret", "berth-repo-credentials")),
            "repository credentials are berth-repo-credentials in the tenant's GitOps "
            "or Kargo namespace",
            id="credentials-in-a-workload-namespace",
        ),
        pytest.param(
            labelled(manifest("v1", "Secret", "argocd-secret", namespace="argocd")),
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
            manifest("v1", "ServiceAccount", "unlabelled"),
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
    assert "destinations namespace 'kube-system' is not one of the tenant's" in found


@pytest.mark.parametrize("pattern", ["payments-*", "payments-?pps", "!payments-gitops"])
def test_validate_plan_refuses_an_appproject_destination_that_is_a_pattern(pattern):
    """A pattern would cover a namespace made later under the tenant's prefix."""
    loose = copy.deepcopy(project())
    loose["spec"]["destinations"].append(
        {"server": "https://kubernetes.default.svc", "namespace": pattern}
    )
    plan = render(inputs())
    plan = plan.__class__(
        apply=tuple(loose if o["kind"] == "AppProject" else o for o in plan.apply)
    )
    (found,) = validate_plan(plan, inputs()).values()
    assert any(f"namespace {pattern!r} is a pattern" in problem for problem in found), found


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
