"""The plan is pure: frozen inputs in, Kubernetes objects as data out. The tenant's own
objects beside its namespaces: the Argo CD AppProject fencing them, its Kargo projects, its
roots (Argo CD, Flux) and repository credentials (shown in a plan only as digests), what a
tenant leaving a cluster deletes, and a plan with every kind validating strictly."""

import base64

import pytest

from provisioning import plan
from provisioning.plan import (
    ARGOCD,
    FLUX,
    ClusterSpec,
    KargoProject,
    RepoCredential,
    TenantSpec,
    render,
)
from tests.support.plan_inputs import (
    CLUSTER,
    TENANT,
    TENANT_ROOTS_DELETED,
    TOKEN,
    find,
    inputs,
    namespace_spec,
    tier,
)


def test_app_project_fences_argocd_to_the_tenants_namespaces_and_repo():
    (project,) = find(render(inputs()), "AppProject")
    spec = project["spec"]
    assert project["metadata"]["namespace"] == "argocd"
    # Its own namespaces by name, <tenant>-apps among them (the root puts Applications
    # there), never the Flux one, never a pattern.
    assert spec["destinations"] == [
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "payments-apps"},
        {"server": plan.IN_CLUSTER_SERVER, "namespace": "payments-shop-dev"},
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
            "namespace": name,
            "defaultServiceAccount": plan.GITOPS_SERVICE_ACCOUNT,
        }
        for name in ("payments-apps", "payments-shop-dev")
    ]


def test_flux_tenant_gets_no_argocd_objects():
    result = render(inputs(engine="flux"))
    assert not find(result, "AppProject")
    assert find(result, "ServiceAccount", plan.GITOPS_SERVICE_ACCOUNT)


def test_kargo_project_and_config_for_an_argocd_kargo_project():
    namespaces = [
        namespace_spec(f"payments-shop-{t}", tier(t), project="shop")
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
        *TENANT_ROOTS_DELETED,
    ]


@pytest.mark.crds
def test_every_object_of_a_plan_with_every_kind_validates_strictly():
    """Unknown fields refused, upstream CRDs' schemas (Argo CD, Kargo, Flux) included."""
    from provisioning.schema import validate_objects

    impersonating = ClusterSpec(**{**vars(CLUSTER), "argocd_impersonation": True})
    namespaces = [
        namespace_spec("payments-shop-dev", storage_gib=1, project="shop"),
        namespace_spec("payments-feed-dev", storage_gib=1, project="feed", engine="flux"),
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
