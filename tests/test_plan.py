"""The plan is pure: frozen inputs in, Kubernetes objects as data out."""

import pytest
import yaml

from provisioning import plan
from provisioning.plan import (
    ClusterSpec,
    NamespaceSpec,
    PlanInput,
    TenantSpec,
    TierSpec,
    render,
)


def tier(slug: str = "dev", *, network: str = "ingress",
         member_role: str = plan.TENANT_EDIT_ROLE) -> TierSpec:
    return TierSpec(
        slug=slug, pod_security_level="restricted", network_preset=network,
        container_default_cpu_millis=500, container_default_memory_mib=512,
        container_request_cpu_millis=100, container_request_memory_mib=128,
        cluster_roles={"owner": plan.TENANT_EDIT_ROLE, "member": member_role,
                       "viewer": plan.TENANT_VIEW_ROLE},
    )


TENANT = TenantSpec(
    slug="payments", name="Payments team",
    groups={"owner": ("payments-owners",), "member": ("payments-devs",), "viewer": ()},
    repo_url="https://git.example.com/payments/deploy.git",
)
CLUSTER = ClusterSpec(name="sandbox", argocd_namespace="argocd", has_kargo=True,
                      ingress_namespace="ingress-nginx")


def inputs(*, engine: str = "argocd", namespaces=None, project: str = "", **extra) -> PlanInput:
    namespaces = namespaces or (
        NamespaceSpec(name="payments-shop-dev", tier=tier(), cpu_millis=1500, memory_mib=3072,
                      storage_gib=5),
    )
    return PlanInput(
        request_id=42, tenant=TENANT, cluster=extra.pop("cluster", CLUSTER), engine=engine,
        namespaces=tuple(namespaces), project=project, **extra,
    )


def find(result: plan.Plan, kind: str, name: str | None = None) -> list[dict]:
    return [o for o in result.apply
            if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


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
    (quota,) = find(result, "ResourceQuota")
    assert quota["spec"]["hard"] == {
        "requests.cpu": "1500m", "limits.cpu": "1500m", "requests.memory": "3Gi",
        "limits.memory": "3Gi", "requests.storage": "5Gi",
    }
    (limits,) = find(result, "LimitRange")
    container = limits["spec"]["limits"][0]
    assert container["default"] == {"cpu": "500m", "memory": "512Mi"}
    assert container["defaultRequest"] == {"cpu": "100m", "memory": "128Mi"}


def test_network_policies_deny_by_default_and_allow_namespace_dns_and_ingress():
    names = {o["metadata"]["name"] for o in find(render(inputs()), "NetworkPolicy")}
    assert names == {"berth-default-deny", "berth-allow-same-namespace", "berth-allow-dns",
                     "berth-allow-ingress-controller"}
    (deny,) = find(render(inputs()), "NetworkPolicy", "berth-default-deny")
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}


def test_isolated_tier_gets_no_ingress_controller_policy():
    ns = NamespaceSpec(name="payments-shop-dev", tier=tier(network="isolated"), cpu_millis=1000,
                       memory_mib=1024, storage_gib=0)
    names = {o["metadata"]["name"] for o in find(render(inputs(namespaces=[ns])), "NetworkPolicy")}
    assert "berth-allow-ingress-controller" not in names


def test_groups_are_bound_to_the_tiers_cluster_roles():
    prod = NamespaceSpec(name="payments-shop-prod",
                         tier=tier("prod", member_role=plan.TENANT_VIEW_ROLE),
                         cpu_millis=1000, memory_mib=1024, storage_gib=0)
    bindings = {o["metadata"]["name"]: o for o in find(render(inputs(namespaces=[prod])),
                                                       "RoleBinding")}
    assert bindings["berth-members"]["roleRef"]["name"] == "berth-tenant-view"
    assert bindings["berth-owners"]["roleRef"]["name"] == "berth-tenant-edit"
    assert bindings["berth-members"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "payments-devs"}
    ]
    assert "berth-viewers" not in bindings  # the tenant has no viewer groups
    gitops = bindings[plan.GITOPS_SERVICE_ACCOUNT]
    assert gitops["subjects"] == [{"kind": "ServiceAccount", "name": plan.GITOPS_SERVICE_ACCOUNT,
                                   "namespace": "payments-shop-prod"}]
    # Whatever the tier gives people, GitOps deploys with Berth's edit role, never `edit`.
    assert gitops["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                 "name": "berth-tenant-edit"}
    assert find(render(inputs(namespaces=[prod])), "ServiceAccount", plan.GITOPS_SERVICE_ACCOUNT)


def test_app_project_fences_argocd_to_the_tenants_namespaces_and_repo():
    (project,) = find(render(inputs()), "AppProject")
    spec = project["spec"]
    assert project["metadata"]["namespace"] == "argocd"
    assert spec["destinations"] == [
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "payments-*"},
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "!payments-apps"},
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "!payments-*-kargo"},
    ]
    assert spec["sourceRepos"] == [TENANT.repo_url]
    assert spec["sourceNamespaces"] == ["payments-apps"]
    assert spec["clusterResourceWhitelist"] == []
    blacklisted = {item["kind"] for item in spec["namespaceResourceBlacklist"]}
    assert {"ResourceQuota", "LimitRange", "Role", "RoleBinding", "AppProject",
            "ProjectConfig"} <= blacklisted
    # Additive NetworkPolicies stay deployable; Berth's own are protected by admission.
    assert "NetworkPolicy" not in blacklisted
    assert "destinationServiceAccounts" not in spec  # the cluster's Argo CD does not impersonate
    roles = {role["name"]: role for role in spec["roles"]}
    assert roles["owner"]["groups"] == ["payments-owners"]
    assert all("payments/*" in policy for policy in roles["member"]["policies"])


def test_argocd_impersonation_maps_every_tenant_namespace_to_its_gitops_service_account():
    impersonating = CLUSTER.__class__(**{**vars(CLUSTER), "argocd_impersonation": True})
    (project,) = find(render(inputs(cluster=impersonating)), "AppProject")
    assert project["spec"]["destinationServiceAccounts"] == [
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "payments-*",
         "defaultServiceAccount": plan.GITOPS_SERVICE_ACCOUNT},
    ]


def test_flux_tenant_gets_no_argocd_objects():
    result = render(inputs(engine="flux"))
    assert not find(result, "AppProject")
    assert find(result, "ServiceAccount", plan.GITOPS_SERVICE_ACCOUNT)


def test_kargo_project_and_config_for_an_argocd_kargo_project():
    namespaces = [
        NamespaceSpec(name=f"payments-shop-{t}", tier=tier(t), cpu_millis=1000, memory_mib=1024,
                      storage_gib=0, project="shop")
        for t in ("dev", "staging", "prod")
    ]
    result = render(inputs(engine="argocd_kargo", namespaces=namespaces, project="shop"))
    (kargo,) = find(result, "Project", "payments-shop-kargo")
    assert "spec" not in kargo  # Kargo removed ProjectSpec; policies live in ProjectConfig
    (config,) = find(result, "ProjectConfig")
    assert config["metadata"]["namespace"] == "payments-shop-kargo"
    kinds = [o["kind"] for o in result.apply]
    assert kinds.index("Project") < kinds.index("ProjectConfig")
    assert find(result, "Namespace", "payments-shop-kargo")[0]["metadata"]["labels"][
        "kargo.akuity.io/project"] == "true"


def test_digest_is_stable_and_changes_with_the_content():
    assert render(inputs()).digest == render(inputs()).digest
    bigger = NamespaceSpec(name="payments-shop-dev", tier=tier(), cpu_millis=2000,
                           memory_mib=3072, storage_gib=5)
    assert render(inputs(namespaces=[bigger])).digest != render(inputs()).digest


def test_decommission_plan_deletes_the_namespace():
    result = render(PlanInput(request_id=7, tenant=TENANT, cluster=CLUSTER, engine="flux",
                              remove_namespaces=("payments-shop-dev",)))
    assert [str(ref) for ref in result.delete] == ["Namespace/payments-shop-dev"]


def test_plan_yaml_round_trips_to_the_same_objects():
    result = render(inputs())
    documents = list(yaml.safe_load_all(result.to_yaml()))
    assert documents == list(result.apply)


@pytest.mark.parametrize("engine", ["argocd", "argocd_kargo", "flux"])
def test_rendering_does_not_mutate_inputs(engine):
    given = inputs(engine=engine)
    render(given)
    assert given == inputs(engine=engine)
