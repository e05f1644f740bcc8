"""The plan is pure: frozen inputs in, Kubernetes objects as data out. What each namespace
gets (Berth's labels, Pod Security, quota and limits, network policies, role bindings), what a
decommission deletes, and the plan's digest and YAML."""

import pytest
import yaml

from provisioning import plan
from provisioning.plan import NamespaceSpec, PlanInput, render
from tests.support.plan_inputs import CLUSTER, TENANT, find, inputs, namespace_spec, tier


def test_every_object_carries_berth_ownership_labels():
    result = render(inputs())
    assert result.apply
    for obj in result.apply:
        labels = obj["metadata"]["labels"]
        assert labels[plan.MANAGED_BY] == "berth"
        assert labels[plan.LABEL_TENANT] == "payments"
        assert labels[plan.LABEL_REQUEST] == "42"
        if obj["metadata"].get("namespace") == "payments-shop-dev":
            assert labels[plan.LABEL_TIER] == "dev"


def test_namespaces_come_first_and_carry_pod_security_labels():
    result = render(inputs())
    kinds = [o["kind"] for o in result.apply]
    assert kinds[: kinds.count("Namespace")] == ["Namespace"] * kinds.count("Namespace")
    (shop,) = find(result, "Namespace", "payments-shop-dev")
    labels = shop["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert labels["pod-security.kubernetes.io/audit"] == "restricted"
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"
    for namespace in find(result, "Namespace"):
        assert "pod-security.kubernetes.io/enforce" in namespace["metadata"]["labels"]


def test_quota_and_limits_come_from_the_request_and_tier():
    result = render(inputs())
    (quota,) = [
        q
        for q in find(result, "ResourceQuota")
        if q["metadata"]["namespace"] == "payments-shop-dev"
    ]
    assert quota["spec"]["hard"] == {
        "requests.cpu": "1500m",
        "limits.cpu": "1500m",
        "requests.memory": "3Gi",
        "limits.memory": "3Gi",
        "requests.storage": "5Gi",
    }
    (limits,) = find(result, "LimitRange")
    container = limits["spec"]["limits"][0]
    assert container["default"] == {"cpu": "500m", "memory": "512Mi"}
    assert container["defaultRequest"] == {"cpu": "100m", "memory": "128Mi"}


def test_network_policies_deny_by_default_and_allow_namespace_dns_and_ingress():
    names = {o["metadata"]["name"] for o in find(render(inputs()), "NetworkPolicy")}
    assert names == {
        "berth-default-deny",
        "berth-allow-same-namespace",
        "berth-allow-dns",
        "berth-allow-ingress-controller",
    }
    (deny,) = find(render(inputs()), "NetworkPolicy", "berth-default-deny")
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}


def test_isolated_tier_gets_no_ingress_controller_policy():
    ns = namespace_spec("payments-shop-dev", tier(network="isolated"))
    names = {o["metadata"]["name"] for o in find(render(inputs(namespaces=[ns])), "NetworkPolicy")}
    assert "berth-allow-ingress-controller" not in names


def test_groups_are_bound_to_the_tiers_cluster_roles():
    prod = namespace_spec("payments-shop-prod", tier("prod", member_role=plan.TENANT_VIEW_ROLE))
    bindings = {
        o["metadata"]["name"]: o for o in find(render(inputs(namespaces=[prod])), "RoleBinding")
    }
    assert bindings["berth-members"]["roleRef"]["name"] == "berth-tenant-view"
    assert bindings["berth-owners"]["roleRef"]["name"] == "berth-tenant-edit"
    assert bindings["berth-members"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "payments-devs"}
    ]
    assert "berth-viewers" not in bindings  # the tenant has no viewer groups
    gitops = bindings[plan.GITOPS_SERVICE_ACCOUNT]
    assert gitops["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": plan.GITOPS_SERVICE_ACCOUNT,
            "namespace": "payments-shop-prod",
        }
    ]
    # Whatever the tier gives people, GitOps deploys with Berth's edit role, never `edit`.
    assert gitops["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "berth-tenant-edit",
    }
    assert find(render(inputs(namespaces=[prod])), "ServiceAccount", plan.GITOPS_SERVICE_ACCOUNT)


def test_digest_is_stable_and_changes_with_the_content():
    assert render(inputs()).digest == render(inputs()).digest
    bigger = NamespaceSpec(
        name="payments-shop-dev", tier=tier(), cpu_millis=2000, memory_mib=3072, storage_gib=5
    )
    assert render(inputs(namespaces=[bigger])).digest != render(inputs()).digest


def test_decommission_plan_deletes_the_namespace():
    result = render(
        PlanInput(
            request_id=7,
            tenant=TENANT,
            cluster=CLUSTER,
            engine="flux",
            remove_namespaces=("payments-shop-dev",),
        )
    )
    assert [str(ref) for ref in result.delete] == ["Namespace/payments-shop-dev"]


def test_plan_yaml_round_trips_to_the_same_objects():
    result = render(inputs())
    documents = list(yaml.safe_load_all(result.to_yaml()))
    assert documents == list(result.redacted())


@pytest.mark.parametrize("engine", ["argocd", "argocd_kargo", "flux"])
def test_rendering_does_not_mutate_inputs(engine):
    given = inputs(engine=engine)
    render(given)
    assert given == inputs(engine=engine)
