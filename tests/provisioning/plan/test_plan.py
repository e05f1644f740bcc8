"""The plan is pure: frozen inputs in, Kubernetes objects as data out."""

import base64

import pytest
import yaml

from provisioning import plan
from provisioning.plan import (
    ARGOCD,
    FLUX,
    ClusterSpec,
    KargoProject,
    NamespaceSpec,
    PlanInput,
    RepoCredential,
    TenantSpec,
    TierSpec,
    render,
)


def tier(
    slug: str = "dev", *, network: str = "ingress", member_role: str = plan.TENANT_EDIT_ROLE
) -> TierSpec:
    return TierSpec(
        slug=slug,
        pod_security_level="restricted",
        network_preset=network,
        container_default_cpu_millis=500,
        container_default_memory_mib=512,
        container_request_cpu_millis=100,
        container_request_memory_mib=128,
        cluster_roles={
            "owner": plan.TENANT_EDIT_ROLE,
            "member": member_role,
            "viewer": plan.TENANT_VIEW_ROLE,
        },
    )


TOKEN = "glpat-very-secret-token"
TENANT = TenantSpec(
    slug="payments",
    name="Payments team",
    groups={"owner": ("payments-owners",), "member": ("payments-devs",), "viewer": ()},
    repo_url="https://git.example.com/payments/deploy.git",
    credential=RepoCredential(transport="https", username="x-access-token", password=TOKEN),
)
CLUSTER = ClusterSpec(
    name="sandbox", argocd_namespace="argocd", has_kargo=True, ingress_namespace="ingress-nginx"
)


def inputs(*, engine: str = "argocd", namespaces=None, project: str = "", **extra) -> PlanInput:
    namespaces = namespaces or (
        NamespaceSpec(
            name="payments-shop-dev", tier=tier(), cpu_millis=1500, memory_mib=3072, storage_gib=5
        ),
    )
    extra.setdefault("tenant_engines", frozenset({FLUX if engine == "flux" else ARGOCD}))
    return PlanInput(
        request_id=42,
        tenant=extra.pop("tenant", TENANT),
        cluster=extra.pop("cluster", CLUSTER),
        engine=engine,
        namespaces=tuple(namespaces),
        project=project,
        **extra,
    )


def find(result: plan.Plan, kind: str, name: str | None = None) -> list[dict]:
    return [
        o
        for o in result.apply
        if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]


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
    ns = NamespaceSpec(
        name="payments-shop-dev",
        tier=tier(network="isolated"),
        cpu_millis=1000,
        memory_mib=1024,
        storage_gib=0,
    )
    names = {o["metadata"]["name"] for o in find(render(inputs(namespaces=[ns])), "NetworkPolicy")}
    assert "berth-allow-ingress-controller" not in names


def test_groups_are_bound_to_the_tiers_cluster_roles():
    prod = NamespaceSpec(
        name="payments-shop-prod",
        tier=tier("prod", member_role=plan.TENANT_VIEW_ROLE),
        cpu_millis=1000,
        memory_mib=1024,
        storage_gib=0,
    )
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


def test_app_project_fences_argocd_to_the_tenants_namespaces_and_repo():
    (project,) = find(render(inputs()), "AppProject")
    spec = project["spec"]
    assert project["metadata"]["namespace"] == "argocd"
    # Its own namespaces, <tenant>-apps among them (the root puts Applications there), but
    # never the Flux one (nor anyone else's).
    assert spec["destinations"] == [
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "payments-*"},
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "!payments-gitops"},
    ]
    assert spec["sourceRepos"] == [TENANT.repo_url]
    assert spec["sourceNamespaces"] == ["payments-apps"]
    assert spec["clusterResourceWhitelist"] == []
    blacklisted = {item["kind"] for item in spec["namespaceResourceBlacklist"]}
    assert {
        "ResourceQuota",
        "LimitRange",
        "Role",
        "RoleBinding",
        "AppProject",
        "ProjectConfig",
    } <= blacklisted
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
        {
            "server": plan.IN_CLUSTER_SERVER,
            "namespace": "payments-*",
            "defaultServiceAccount": plan.GITOPS_SERVICE_ACCOUNT,
        },
    ]


def test_flux_tenant_gets_no_argocd_objects():
    result = render(inputs(engine="flux"))
    assert not find(result, "AppProject")
    assert find(result, "ServiceAccount", plan.GITOPS_SERVICE_ACCOUNT)


def test_kargo_project_and_config_for_an_argocd_kargo_project():
    namespaces = [
        NamespaceSpec(
            name=f"payments-shop-{t}",
            tier=tier(t),
            cpu_millis=1000,
            memory_mib=1024,
            storage_gib=0,
            project="shop",
        )
        for t in ("dev", "staging", "prod")
    ]
    kargo_side = KargoProject("shop", "payments-shop-kargo", tuple(ns.tier for ns in namespaces))
    result = render(
        inputs(
            engine="argocd_kargo",
            namespaces=namespaces,
            project="shop",
            kargo_projects=(kargo_side,),
        )
    )
    (kargo,) = find(result, "Project", "payments-shop-kargo")
    assert "spec" not in kargo  # Kargo removed ProjectSpec; policies live in ProjectConfig
    (config,) = find(result, "ProjectConfig")
    assert config["metadata"]["namespace"] == "payments-shop-kargo"
    kinds = [o["kind"] for o in result.apply]
    assert kinds.index("Project") < kinds.index("ProjectConfig")
    assert (
        find(result, "Namespace", "payments-shop-kargo")[0]["metadata"]["labels"][
            "kargo.akuity.io/project"
        ]
        == "true"
    )


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


# --- the tenant's own objects: roots and credentials ---------------------------------------


def decoded(secret: dict) -> dict:
    return {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}


def test_argocd_root_applies_the_clusters_directory_bound_to_the_tenants_project():
    result = render(inputs())
    (root,) = find(result, "Application", plan.ROOT_NAME)
    assert root["metadata"]["namespace"] == "payments-apps"
    assert root["spec"] == {
        "project": "payments",
        "source": {
            "repoURL": TENANT.repo_url,
            "targetRevision": "main",
            "path": "clusters/sandbox/argocd",
        },
        "destination": {"server": plan.IN_CLUSTER_SERVER, "namespace": "payments-apps"},
        "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
    }
    # <tenant>-apps holds Applications only: its quota lets nothing run.
    (quota,) = [
        q for q in find(result, "ResourceQuota") if q["metadata"]["namespace"] == "payments-apps"
    ]
    assert quota["spec"]["hard"]["pods"] == "0"


def test_the_root_follows_the_tenants_base_path_and_branch():
    tenant = TenantSpec(**{**vars(TENANT), "repo_path": "teams/payments/", "repo_branch": "gitops"})
    (root,) = find(render(inputs(tenant=tenant)), "Application", plan.ROOT_NAME)
    assert root["spec"]["source"]["path"] == "teams/payments/clusters/sandbox/argocd"
    assert root["spec"]["source"]["targetRevision"] == "gitops"


def test_argocd_repository_secret_is_scoped_to_the_tenants_project():
    (secret,) = find(render(inputs()), "Secret")
    assert secret["metadata"]["namespace"] == "argocd"
    assert secret["metadata"]["labels"]["argocd.argoproj.io/secret-type"] == "repository"
    assert decoded(secret) == {
        "type": "git",
        "url": TENANT.repo_url,
        "project": "payments",
        "username": "x-access-token",
        "password": TOKEN,
    }


def test_a_cluster_where_berth_writes_no_argocd_secrets_gets_none():
    off = ClusterSpec(**{**vars(CLUSTER), "argocd_repository_secrets": False})
    assert not find(render(inputs(cluster=off)), "Secret")


def test_no_credential_no_secret_and_no_repository_no_root():
    bare = TenantSpec(**{**vars(TENANT), "credential": None})
    assert not find(render(inputs(tenant=bare)), "Secret")
    nothing = TenantSpec(**{**vars(TENANT), "repo_url": "", "credential": None})
    assert not find(render(inputs(tenant=nothing)), "Application")


def test_a_plan_shows_credentials_only_as_digests_and_still_sees_them_change():
    result = render(inputs())
    assert TOKEN not in result.to_yaml()
    assert base64.b64encode(TOKEN.encode()).decode() not in result.to_yaml()
    (shown,) = [o for o in result.redacted() if o["kind"] == "Secret"]
    assert all(value.startswith("<redacted> sha256:") for value in shown["data"].values())
    rotated = TenantSpec(
        **{
            **vars(TENANT),
            "credential": RepoCredential(
                transport="https", username="x-access-token", password="a-new-token"
            ),
        }
    )
    assert render(inputs(tenant=rotated)).digest != result.digest


def test_flux_root_runs_as_the_tenants_reconciler_from_its_one_source():
    ssh = TenantSpec(
        **{
            **vars(TENANT),
            "repo_url": "git@git.example.com:payments/deploy.git",
            "credential": RepoCredential(
                transport="ssh",
                ssh_private_key="-----BEGIN KEY-----\nk\n",
                known_hosts="git.example.com ssh-ed25519 AAAAC3NzaC1lZDI1",
            ),
        }
    )
    result = render(inputs(engine="flux", tenant=ssh))
    (source,) = find(result, "GitRepository")
    assert (source["metadata"]["namespace"], source["metadata"]["name"]) == (
        "payments-gitops",
        "payments",
    )
    assert source["spec"]["url"] == "ssh://git@git.example.com/payments/deploy.git"
    assert source["spec"]["secretRef"] == {"name": plan.REPO_CREDENTIALS}
    (secret,) = find(result, "Secret")
    assert set(decoded(secret)) == {"identity", "known_hosts"}
    (root,) = find(result, "Kustomization", plan.ROOT_NAME)
    assert root["spec"]["serviceAccountName"] == plan.RECONCILER_SERVICE_ACCOUNT
    assert root["spec"]["targetNamespace"] == "payments-gitops"
    assert root["spec"]["path"] == "./clusters/sandbox/flux"
    assert root["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "payments"}
    (sources,) = find(result, "ConfigMap", plan.GITOPS_SOURCES_CONFIG)
    assert sources["data"] == {"repository": source["spec"]["url"]}
    # In the environment, the reconciler may do what the tenant's GitOps identity may.
    binding = find(result, "RoleBinding", plan.RECONCILER_SERVICE_ACCOUNT)
    by_namespace = {b["metadata"]["namespace"]: b for b in binding}
    assert by_namespace["payments-shop-dev"]["roleRef"]["name"] == plan.TENANT_EDIT_ROLE
    assert by_namespace["payments-gitops"]["roleRef"]["name"] == plan.FLUX_RECONCILER_ROLE


def test_requests_without_tenant_engines_bring_no_tenant_objects():
    result = render(inputs(tenant_engines=frozenset()))
    assert not find(result, "AppProject") and not find(result, "Application")
    assert not find(result, "Namespace", "payments-apps")


def test_kargo_people_promote_only_where_their_tier_lets_them_write():
    stages = [tier("dev"), tier("staging"), tier("prod", member_role=plan.TENANT_VIEW_ROLE)]
    project = KargoProject("shop", "payments-shop-kargo", tuple(stages))
    result = render(inputs(engine="argocd_kargo", project="shop", kargo_projects=(project,)))
    members = {
        o["kind"]: o
        for o in result.apply
        if o["metadata"]["name"].startswith("berth-members")
        and o["metadata"].get("namespace") == "payments-shop-kargo"
        and o["kind"] in ("ServiceAccount", "Role")
    }
    assert members["ServiceAccount"]["metadata"]["annotations"] == {
        "rbac.kargo.akuity.io/claims": '{"groups":["payments-devs"]}'
    }
    assert members["Role"]["rules"][0]["resourceNames"] == ["dev", "staging"]
    (owners,) = find(result, "Role", "berth-owners-promote")
    assert owners["rules"][0]["resourceNames"] == ["dev", "prod", "staging"]
    # Everyone of the tenant sees the project, through Kargo's own viewer role.
    viewer = find(result, "RoleBinding", "berth-members-view")[0]
    assert viewer["roleRef"]["name"] == plan.KARGO_VIEWER_ROLE
    (credential,) = find(result, "Secret", plan.REPO_CREDENTIALS)
    assert credential["metadata"]["labels"]["kargo.akuity.io/cred-type"] == "git"


def test_a_tenant_leaving_a_cluster_deletes_namespaces_then_kargo_then_its_roots():
    result = render(
        inputs(
            namespaces=(),
            remove_namespaces=("payments-shop-dev",),
            tenant_engines=frozenset(),
            remove_kargo=(KargoProject("shop", "payments-shop-kargo"),),
            remove_tenant_engines=frozenset({ARGOCD, FLUX}),
        )
    )
    assert [str(ref) for ref in result.delete] == [
        "Namespace/payments-shop-dev",
        "Project/payments-shop-kargo",
        "Namespace/payments-shop-kargo",
        "Application/payments-apps/berth-root",
        "Secret/argocd/berth-repo-payments",
        "AppProject/argocd/payments",
        "Namespace/payments-apps",
        "Kustomization/payments-gitops/berth-root",
        "Namespace/payments-gitops",
    ]


@pytest.mark.crds
def test_every_object_of_a_plan_with_every_kind_validates_strictly():
    """Unknown fields refused, upstream CRDs' schemas (Argo CD, Kargo, Flux) included."""
    from provisioning.schema import validate_objects

    impersonating = ClusterSpec(**{**vars(CLUSTER), "argocd_impersonation": True})
    namespaces = [
        NamespaceSpec(
            name="payments-shop-dev",
            tier=tier(),
            cpu_millis=1000,
            memory_mib=1024,
            storage_gib=1,
            project="shop",
        ),
        NamespaceSpec(
            name="payments-feed-dev",
            tier=tier(),
            cpu_millis=1000,
            memory_mib=1024,
            storage_gib=1,
            project="feed",
            engine="flux",
        ),
    ]
    result = render(
        inputs(
            engine="argocd_kargo",
            project="shop",
            namespaces=namespaces,
            cluster=impersonating,
            tenant_engines=frozenset({ARGOCD, FLUX}),
            kargo_projects=(KargoProject("shop", "payments-shop-kargo", (tier(),)),),
        )
    )
    kinds = {obj["kind"] for obj in result.apply}
    assert {
        "Secret",
        "Application",
        "GitRepository",
        "Kustomization",
        "Role",
        "ConfigMap",
        "AppProject",
        "Project",
        "ProjectConfig",
    } <= kinds
    assert validate_objects(list(result.apply)) == {}
