"""Berth's guardrails as data: the cluster bootstrap (roles, admission policies and their
bindings), the same for every tenant, and the parameters each tenant namespace carries;
everything Berth labels as its own is in the protect policy's scope."""

from provisioning.guardrails import PROTECTED_RESOURCES, ROOT_RESOURCES
from provisioning.plan import MANAGED_BY, render
from provisioning.schema import validate_objects
from tests.support.authz import resource_of
from tests.support.guardrails import BOOTSTRAP, NAMESPACE, inputs


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
