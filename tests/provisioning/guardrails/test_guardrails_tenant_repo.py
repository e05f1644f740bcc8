"""Berth's guardrails as data: what a tenant's repository cannot do. A guardrail object
committed there takes no effect (Argo CD's AppProject refuses it, the namespace's GitOps
identity may not write it), while what a team deploys does."""

import pytest

from kubesandbox.testing import upstream_crds
from provisioning.guardrails import appproject_permits
from provisioning.plan import render
from tests.support.authz import LiveCluster, resource_of
from tests.support.guardrails import BOOTSTRAP, GITOPS, NAMESPACE, inputs, project


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
