"""The pure GitOps rendering: which files, what is in them, and how they meet a repository."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import yaml

from provisioning import gitops_plan
from provisioning.plan import (
    GUARDRAIL_KINDS,
    ClusterSpec,
    NamespaceSpec,
    PlanInput,
    TenantSpec,
    TierSpec,
)
from provisioning.schema import validate_objects
from tenants.naming import fit

ENGINES = ("argocd", "argocd_kargo", "flux")
ROLES = {"owner": "edit", "member": "edit", "viewer": "view"}
TIERS = {
    "review": TierSpec(
        "review", "restricted", "ingress", 500, 512, 100, 128, ROLES, position=5, is_ephemeral=True
    ),
    "dev": TierSpec("dev", "baseline", "ingress", 500, 512, 100, 128, ROLES, position=10),
    "staging": TierSpec("staging", "restricted", "ingress", 500, 512, 100, 128, ROLES, position=20),
    "prod": TierSpec("prod", "restricted", "ingress", 500, 512, 100, 128, ROLES, position=30),
}
# Everything that grants or bounds permissions, and must therefore never be the team's.
NEVER_IN_A_TENANT_REPO = {
    *GUARDRAIL_KINDS,
    ("", "Namespace"),
    ("", "ServiceAccount"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
}


def inputs(
    engine="argocd_kargo",
    tiers=("dev", "staging", "prod"),
    *,
    project="shop",
    repo="https://git.example.com/payments/gitops.git",
    path="",
    request_id=12,
    has_kargo=True,
    argocd_namespace="argocd",
) -> PlanInput:
    return PlanInput(
        request_id=request_id,
        tenant=TenantSpec(
            "payments",
            "Payments team",
            {"member": ("payments-devs",)},
            repo,
            repo_branch="main",
            repo_path=path,
        ),
        cluster=ClusterSpec("sandbox", argocd_namespace, has_kargo, "ingress-nginx"),
        engine=engine,
        namespaces=tuple(
            NamespaceSpec(f"payments-shop-{tier}", TIERS[tier], 1000, 2048, 0, project)
            for tier in tiers
        ),
        project=project,
        app="shop",
    )


def test_rendering_is_deterministic_and_keys_are_sorted():
    first = gitops_plan.render_files(inputs())
    assert gitops_plan.render_files(inputs()) == first
    assert list(first) == sorted(first)
    for content in first.values():
        for document in yaml.safe_load_all(content):
            dumped = yaml.safe_dump(document, sort_keys=True, default_flow_style=False, width=1000)
            assert dumped in content  # written in sorted key order


@pytest.mark.parametrize("engine", ENGINES)
def test_every_file_starts_with_berths_header_naming_the_request(engine):
    for path, content in gitops_plan.render_files(inputs(engine)).items():
        first_line = content.splitlines()[0]
        assert first_line.startswith(
            ("# Managed by Berth (request #12)", "# Created by Berth (request #12)")
        ), path
        if "/overlays/" in path or "/base/" in path:
            assert gitops_plan.is_skeleton(content)
        else:
            assert first_line == (
                "# Managed by Berth (request #12). Changes here are "
                "overwritten; edit overlays/ instead."
            )


@pytest.mark.parametrize("engine", ENGINES)
def test_rendered_files_never_contain_a_kind_that_grants_or_bounds_permissions(engine):
    files = gitops_plan.render_files(inputs(engine, ("review", "dev", "staging", "prod")))
    kinds = {
        (doc["apiVersion"].rpartition("/")[0], doc["kind"]) for doc in gitops_plan.documents(files)
    }
    assert kinds
    assert not kinds & NEVER_IN_A_TENANT_REPO
    assert kinds <= gitops_plan.TENANT_KINDS
    # Nor do they carry the label Berth's admission policy protects: the team's
    # controllers apply them.
    for doc in gitops_plan.documents(files):
        assert "app.kubernetes.io/managed-by" not in doc.get("metadata", {}).get("labels", {})


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        (
            "argocd",
            [
                "base/kustomization.yaml",
                "dev/application.yaml",
                "dev/kustomization.yaml",
                "overlays/dev/kustomization.yaml",
                "overlays/prod/kustomization.yaml",
                "prod/application.yaml",
                "prod/kustomization.yaml",
            ],
        ),
        (
            "argocd_kargo",
            [
                "base/kustomization.yaml",
                "dev/application.yaml",
                "dev/kustomization.yaml",
                "kargo/kustomization.yaml",
                "kargo/stages.yaml",
                "kargo/warehouse.yaml",
                "overlays/dev/kustomization.yaml",
                "overlays/prod/kustomization.yaml",
                "prod/application.yaml",
                "prod/kustomization.yaml",
            ],
        ),
        (
            "flux",
            [
                "base/kustomization.yaml",
                "dev/flux.yaml",
                "dev/kustomization.yaml",
                "overlays/dev/kustomization.yaml",
                "overlays/prod/kustomization.yaml",
                "prod/flux.yaml",
                "prod/kustomization.yaml",
            ],
        ),
    ],
)
def test_layout_per_engine(engine, expected):
    files = gitops_plan.render_files(inputs(engine, ("dev", "prod"), path="/teams/payments/"))
    assert list(files) == [f"teams/payments/apps/shop/{path}" for path in expected]


def test_kargo_files_only_for_a_project_on_a_cluster_with_kargo():
    plain = gitops_plan.render_files(inputs(project=""))
    no_kargo = gitops_plan.render_files(inputs(has_kargo=False))
    assert not [p for p in [*plain, *no_kargo] if "/kargo/" in p]
    assert [p for p in plain if p.endswith("application.yaml")]


def test_one_application_per_environment_in_the_tenants_apps_namespace():
    files = gitops_plan.render_files(inputs("argocd", ("dev", "prod")))
    application = yaml.safe_load(files["apps/shop/prod/application.yaml"])
    assert application["metadata"]["namespace"] == "payments-apps"
    assert application["metadata"]["name"] == "payments-shop-prod"
    assert application["spec"] == {
        "project": "payments",
        "destination": {
            "server": "https://kubernetes.default.svc",
            "namespace": "payments-shop-prod",
        },
        "source": {
            "repoURL": "https://git.example.com/payments/gitops.git",
            "targetRevision": "main",
            "path": "apps/shop/overlays/prod",
        },
        "syncPolicy": {
            "automated": {"prune": True, "selfHeal": True},
            "syncOptions": ["CreateNamespace=false"],
        },
    }


def test_stages_promote_dev_then_staging_then_prod_and_review_takes_freight_directly():
    files = gitops_plan.render_files(inputs(tiers=("prod", "review", "staging", "dev")))
    stages = list(yaml.safe_load_all(files["apps/shop/kargo/stages.yaml"]))
    assert [
        (s["metadata"]["name"], s["spec"]["requestedFreight"][0]["sources"]) for s in stages
    ] == [
        ("dev", {"direct": True}),
        ("staging", {"stages": ["dev"]}),
        ("prod", {"stages": ["staging"]}),
        ("review", {"direct": True}),
    ]
    prod = stages[2]["spec"]["promotionTemplate"]["spec"]
    assert [step["uses"] for step in prod["steps"]] == [
        "git-clone",
        "kustomize-set-image",
        "git-commit",
        "git-push",
        "argocd-update",
    ]
    assert prod["steps"][1]["config"]["path"] == "./out/apps/shop/overlays/prod"
    assert prod["steps"][4]["config"]["apps"][0] == {
        "name": "payments-shop-prod",
        "namespace": "payments-apps",
        "sources": [
            {"repoURL": "${{ vars.gitRepo }}", "desiredRevision": "${{ outputs.commit.commit }}"}
        ],
    }
    warehouse = yaml.safe_load(files["apps/shop/kargo/warehouse.yaml"])
    assert warehouse["spec"]["subscriptions"] == [
        {
            "image": {
                "repoURL": "registry.example.com/payments/shop",
                "imageSelectionStrategy": "SemVer",
                "discoveryLimit": 20,
            }
        }
    ]


def test_flux_kustomizations_run_as_the_tenants_reconciler_from_its_one_source():
    files = gitops_plan.render_files(
        inputs("flux", ("dev",), repo="git@git.example.com:payments/gitops.git")
    )
    (kustomization,) = yaml.safe_load_all(files["apps/shop/dev/flux.yaml"])
    assert kustomization["apiVersion"] == "kustomize.toolkit.fluxcd.io/v1"
    # Beside the tenant's one GitRepository, which Berth applies (no source in the repo).
    assert kustomization["metadata"]["namespace"] == "payments-gitops"
    assert kustomization["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "payments"}
    assert kustomization["spec"]["serviceAccountName"] == "berth-reconciler"
    assert kustomization["spec"]["targetNamespace"] == "payments-shop-dev"
    listed = yaml.safe_load(files["apps/shop/dev/kustomization.yaml"].split("\n", 1)[1])
    assert listed["resources"] == ["flux.yaml"]


def test_credentials_in_the_repository_url_never_reach_a_file():
    token = "ghp_s3cretTokenInTheUrl"
    for engine in ENGINES:
        files = gitops_plan.render_files(
            inputs(engine, repo=f"https://bot:{token}@git.example.com/payments/gitops.git")
        )
        assert token not in "".join(files.values())
        assert "bot@" not in "".join(files.values())


def test_a_base_path_outside_the_repository_is_refused():
    for path in ("../elsewhere", "a/../../b", "a//b/./c"):
        with pytest.raises(ValueError, match="relative path inside the repository"):
            gitops_plan.render_files(inputs(path=path))


def test_nothing_is_rendered_once_no_environment_is_left():
    assert gitops_plan.render_files(inputs(tiers=())) == {}


@pytest.mark.crds
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "repo",
    ["https://git.example.com/payments/gitops.git", "git@git.example.com:payments/gitops.git"],
)
def test_every_generated_manifest_validates_against_the_upstream_crds(engine, repo):
    files = gitops_plan.render_files(
        inputs(engine, ("review", "dev", "staging", "prod"), repo=repo, path="teams/payments")
    )
    objects = gitops_plan.cluster_objects(files)
    assert objects
    assert validate_objects(objects) == {}


@pytest.mark.crds
def test_the_crd_check_refuses_an_unknown_field():
    objects = gitops_plan.cluster_objects(gitops_plan.render_files(inputs()))
    broken = copy.deepcopy(objects)
    for obj in broken:
        obj["spec"]["unknownField"] = True
    assert len(validate_objects(broken)) == len(objects)


# --- meeting the repository ---------------------------------------------------------------


def scope(spec: PlanInput) -> tuple[str, ...]:
    return gitops_plan.scope(spec)


def test_converging_an_unchanged_repository_changes_nothing():
    spec = inputs()
    rendered = gitops_plan.render_files(spec)
    assert gitops_plan.converge(rendered, rendered, scope(spec)).files == rendered


def test_a_later_request_with_the_same_content_keeps_the_header_of_the_first():
    spec = inputs()
    first = gitops_plan.render_files(spec)
    later = gitops_plan.render_files(replace(spec, request_id=99))
    converged = gitops_plan.converge(first, later, scope(spec))
    assert converged.files == first
    assert gitops_plan.changes(first, converged.files) == {}


def test_a_managed_file_follows_the_rendering_and_goes_with_its_environment():
    before = gitops_plan.render_files(inputs(tiers=("dev", "staging", "prod")))
    after_spec = inputs(tiers=("dev", "prod"), request_id=40)
    converged = gitops_plan.converge(
        before, gitops_plan.render_files(after_spec), scope(after_spec)
    )
    changed = gitops_plan.changes(before, converged.files)
    assert changed == {
        "apps/shop/kargo/stages.yaml": "modified",  # prod now follows dev
        "apps/shop/overlays/staging/kustomization.yaml": "deleted",  # untouched skeleton
        "apps/shop/staging/application.yaml": "deleted",
        "apps/shop/staging/kustomization.yaml": "deleted",
    }
    assert converged.files["apps/shop/kargo/stages.yaml"].startswith(
        "# Managed by Berth (request #40)"
    )


def test_a_skeleton_is_created_once_and_never_overwritten():
    spec = inputs(tiers=("dev",))
    rendered = gitops_plan.render_files(spec)
    overlay = "apps/shop/overlays/dev/kustomization.yaml"
    edited = {**rendered, overlay: rendered[overlay] + "patches:\n- path: replicas.yaml\n"}
    converged = gitops_plan.converge(edited, rendered, scope(spec))
    assert converged.files[overlay] == edited[overlay]
    assert not converged.notes


def test_an_edited_skeleton_survives_its_environment_with_a_note():
    spec = inputs(tiers=("dev",))
    rendered = gitops_plan.render_files(spec)
    overlay = "apps/shop/overlays/dev/kustomization.yaml"
    edited = {**rendered, overlay: rendered[overlay] + "images:\n- name: shop\n  newTag: 1.2.3\n"}
    gone = replace(spec, namespaces=())
    converged = gitops_plan.converge(edited, gitops_plan.render_files(gone), scope(spec))
    assert converged.files == {overlay: edited[overlay]}
    assert converged.notes == (f"{overlay}: kept, the team changed it since Berth created it",)


def test_files_the_team_owns_are_never_touched():
    spec = inputs(tiers=("dev",))
    rendered = gitops_plan.render_files(spec)
    application = "apps/shop/dev/application.yaml"
    taken_over = rendered[application].split("\n", 1)[1]  # header line removed
    current = {
        **rendered,
        application: taken_over,
        "apps/shop/overlays/dev/deployment.yaml": "kind: Deployment\n",
        "elsewhere/file.yaml": "outside the scope\n",
    }
    converged = gitops_plan.converge(current, rendered, scope(spec))
    assert converged.files[application] == taken_over
    assert converged.files["apps/shop/overlays/dev/deployment.yaml"] == "kind: Deployment\n"
    assert "elsewhere/file.yaml" not in converged.files  # outside the scope: not ours to list
    assert converged.notes == (
        f"{application}: not Berth's any more (its first line is not Berth's header)",
    )
    gone = gitops_plan.converge(current, {}, scope(spec)).files
    assert gone == {
        application: taken_over,
        "apps/shop/overlays/dev/deployment.yaml": "kind: Deployment\n",
    }


def test_diff_files_is_a_unified_diff_of_added_changed_and_deleted_files():
    diff = gitops_plan.diff_files(
        {"a.yaml": "x: 1\n", "b.yaml": "y: 1\n"}, {"a.yaml": "x: 2\n", "c.yaml": "z: 1"}
    )
    assert diff == (
        "--- a/a.yaml\n+++ b/a.yaml\n@@ -1 +1 @@\n-x: 1\n+x: 2\n"
        "--- a/b.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-y: 1\n"
        "--- /dev/null\n+++ b/c.yaml\n@@ -0,0 +1 @@\n+z: 1\n"
    )
    assert gitops_plan.diff_files({"a": "same\n"}, {"a": "same\n"}) == ""


def test_commit_message_says_what_and_why_and_ends_in_trailers():
    message = gitops_plan.commit_message(
        kind="decommission",
        request_id=14,
        tenant="payments",
        app="shop",
        engine="argocd_kargo",
        namespaces=["payments-shop-dev"],
        changed={"apps/shop/dev/application.yaml": "deleted"},
        notes=["apps/shop/overlays/dev/kustomization.yaml: kept, the team changed it"],
        approvers=["pat", "olivia"],
        reason="project cancelled",
    )
    subject, *rest = message.split("\n\n")
    assert subject == "Remove payments-shop-dev (decommission request #14)"
    assert "which asked to remove payments-shop-dev" in rest[0]
    assert "Reason given: project cancelled" in message
    assert "  deleted   apps/shop/dev/application.yaml" in message
    assert message.endswith("\n\nBerth-Request: 14\nApproved-by: pat\nApproved-by: olivia\n")


# --- ephemeral environments -------------------------------------------------------------------


def with_review_apps(engine: str, *slugs: str, namespace: str = "") -> PlanInput:
    spec = inputs(engine, ("dev", "prod"))
    reviews = tuple(
        NamespaceSpec(
            namespace or fit(f"payments-shop-{slug}"),
            TIERS["review"],
            500,
            1024,
            0,
            "shop",
            environment=slug,
        )
        for slug in slugs
    )
    return replace(spec, namespaces=spec.namespaces + reviews)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_ephemeral_environment_has_files_of_its_own(engine):
    files = gitops_plan.render_files(
        with_review_apps(engine, "review-1", "review-2", namespace="payments-review-apps")
    )
    assert "apps/shop/overlays/review/review-1/kustomization.yaml" in files
    overlay = yaml.safe_load(
        files["apps/shop/overlays/review/review-2/kustomization.yaml"].split("\n", 2)[2]
    )
    assert overlay == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": "payments-review-apps",
        "resources": ["../../../base"],
    }
    names = {(obj["kind"], obj["metadata"]["name"]) for obj in gitops_plan.cluster_objects(files)}
    if engine == "flux":
        assert ("Kustomization", "payments-shop-review-1") in names
        assert ("Kustomization", "payments-shop-review-2") in names  # same namespace, no clash
    else:
        assert ("Application", "payments-shop-review-1") in names
        assert ("Application", "payments-shop-review-2") in names
    if engine == "argocd_kargo":
        assert ("Stage", "review-review-1") in names
        stages = {
            obj["metadata"]["name"]: obj
            for obj in gitops_plan.cluster_objects(files)
            if obj["kind"] == "Stage"
        }
        # Review apps take Freight from the Warehouse and feed nothing: prod follows dev.
        assert stages["review-review-1"]["spec"]["requestedFreight"][0]["sources"] == {
            "direct": True
        }
        assert stages["prod"]["spec"]["requestedFreight"][0]["sources"] == {"stages": ["dev"]}


@pytest.mark.crds
@pytest.mark.parametrize("engine", ENGINES)
def test_ephemeral_environments_validate_against_the_upstream_crds(engine):
    files = gitops_plan.render_files(with_review_apps(engine, "review-1", "x" * 60))
    assert validate_objects(gitops_plan.cluster_objects(files)) == {}


def test_removing_one_ephemeral_environment_touches_only_its_files():
    before = gitops_plan.render_files(with_review_apps("argocd", "review-1", "review-2"))
    after = gitops_plan.render_files(with_review_apps("argocd", "review-2"))
    spec = with_review_apps("argocd", "review-2")
    changed = gitops_plan.changes(before, gitops_plan.converge(before, after, scope(spec)).files)
    assert changed == {
        "apps/shop/overlays/review/review-1/kustomization.yaml": "deleted",
        "apps/shop/review/review-1/application.yaml": "deleted",
        "apps/shop/review/review-1/kustomization.yaml": "deleted",
    }


# --- the cluster's index: what the tenant's roots apply --------------------------------------


def listed(content: str) -> list[str]:
    assert gitops_plan.is_managed(content)
    return yaml.safe_load(content.split("\n", 1)[1])["resources"]


def test_a_new_tenant_on_a_cluster_gets_an_empty_index_for_its_roots():
    spec = inputs(path="teams/payments")
    assert gitops_plan.index_path(spec) == (
        "teams/payments/clusters/sandbox/argocd/kustomization.yaml"
    )
    # One index per engine: each root is handed its own engine's objects only.
    assert gitops_plan.index_path(spec, "flux") == (
        "teams/payments/clusters/sandbox/flux/kustomization.yaml"
    )
    content, note = gitops_plan.render_index(None, spec)
    assert listed(content) == [] and not note


def test_the_index_lists_the_applications_environments_and_kargo_and_keeps_the_others():
    spec = inputs()
    entries = gitops_plan.index_entries(spec)
    assert entries == [
        "../../../apps/shop/dev",
        "../../../apps/shop/kargo",
        "../../../apps/shop/prod",
        "../../../apps/shop/staging",
    ]
    cart, _ = gitops_plan.render_index(None, spec, ["../../../apps/cart/dev"], app="cart")
    both, _ = gitops_plan.render_index(cart, spec, entries, app="shop")
    assert listed(both) == ["../../../apps/cart/dev", *entries]
    # An application that leaves the cluster leaves the index; the others stay.
    gone, _ = gitops_plan.render_index(both, spec, [], app="shop")
    assert listed(gone) == ["../../../apps/cart/dev"]
    # Writing what is there already changes nothing, not even the header's request.
    again, _ = gitops_plan.render_index(gone, replace(spec, request_id=99), [], app="shop")
    assert again == gone


def test_environments_on_another_cluster_stay_out_of_this_clusters_index():
    spec = inputs(tiers=("dev", "prod"))
    elsewhere = replace(spec.namespaces[1], cluster="prod-eu")
    spec = replace(spec, namespaces=(spec.namespaces[0], elsewhere))
    assert gitops_plan.index_entries(spec) == ["../../../apps/shop/dev", "../../../apps/shop/kargo"]


def test_an_index_the_team_took_over_is_left_alone_with_a_note():
    spec = inputs()
    theirs = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    content, note = gitops_plan.render_index(theirs, spec, ["../../../apps/shop/dev"], app="shop")
    assert content == theirs
    assert "not Berth's any more" in note


def test_kubectl_kustomize_builds_the_index_into_every_environments_definitions(tmp_path):
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on PATH to build the kustomization with")
    for engine in ENGINES:
        spec = inputs(engine, ("review", "dev", "staging", "prod"))
        files = gitops_plan.render_files(spec)
        index, _ = gitops_plan.render_index(None, spec, gitops_plan.index_entries(spec), app="shop")
        files[gitops_plan.index_path(spec)] = index
        root = tmp_path / engine
        for path, content in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(content)
        index_dir = (root / gitops_plan.index_path(spec)).parent
        built = subprocess.run(
            [kubectl, "kustomize", str(index_dir)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert built.returncode == 0, built.stderr
        built_objects = sorted(
            (doc["kind"], doc["metadata"]["name"]) for doc in yaml.safe_load_all(built.stdout)
        )
        rendered = sorted(
            (obj["kind"], obj["metadata"]["name"]) for obj in gitops_plan.cluster_objects(files)
        )
        assert built_objects == rendered, engine
