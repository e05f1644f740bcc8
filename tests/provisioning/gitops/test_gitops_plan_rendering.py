"""The pure GitOps rendering: which files, what is in them, per engine (Argo CD, Argo CD +
Kargo, Flux), and that every generated manifest validates against the upstream CRDs and never
holds a kind that grants or bounds permissions."""

from __future__ import annotations

import copy

import pytest
import yaml

from provisioning import gitops_plan
from provisioning.plan import GUARDRAIL_KINDS
from provisioning.schema import validate_objects
from tests.support.gitops_rendering import ENGINES, inputs

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
