"""provisioning.schema: offline validation of custom resources (Argo CD, Kargo, Flux)
against the upstream CRDs (no Django, no database), and where those CRDs are read from:
$BERTH_CRD_DIR only, never beside the installation."""

import copy
import shutil

import pytest

from provisioning import schema
from provisioning.schema import (
    SchemaError,
    SchemaUnavailable,
    crd_directory,
    validate_object,
    validate_objects,
)
from tests.support.schema_objects import NAMESPACE, NS, paths

CRD_DIR = crd_directory()
needs_crds = pytest.mark.crds  # skipped where $BERTH_CRD_DIR names none (tests/conftest.py)


APP_PROJECT = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "AppProject",
    "metadata": {"name": NS, "namespace": "argocd"},
    "spec": {
        "description": "Berth tenant payments",
        "destinations": [{"server": "https://kubernetes.default.svc", "namespace": NS}],
        "sourceRepos": ["https://git.example.com/payments/*"],
        "sourceNamespaces": [NS],
        "clusterResourceWhitelist": [],
        "namespaceResourceBlacklist": [
            {"group": "", "kind": "ResourceQuota"},
            {"group": "", "kind": "LimitRange"},
            {"group": "networking.k8s.io", "kind": "NetworkPolicy"},
        ],
        "roles": [
            {
                "name": "developers",
                "description": "payments developers",
                "groups": ["payments-devs"],
                "policies": [f"p, proj:{NS}:developers, applications, *, {NS}/*, allow"],
            }
        ],
    },
}
APPLICATION = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Application",
    "metadata": {"name": "api", "namespace": NS},
    "spec": {
        "project": NS,
        "source": {
            "repoURL": "https://git.example.com/payments/api.git",
            "path": "deploy",
            "targetRevision": "main",
            "helm": {"valuesObject": {"replicas": 2, "anything": {"goes": ["here"]}}},
        },
        "destination": {"server": "https://kubernetes.default.svc", "namespace": NS},
        "syncPolicy": {
            "automated": {"prune": True, "selfHeal": True},
            "syncOptions": ["CreateNamespace=false"],
            "retry": {"limit": 3, "backoff": {"duration": "5s", "factor": 2}},
        },
    },
}
KARGO_PROJECT = {
    "apiVersion": "kargo.akuity.io/v1alpha1",
    "kind": "Project",
    "metadata": {"name": NS, "labels": {"berth.dev/tenant": NS}},
}
KARGO_PROJECT_CONFIG = {
    "apiVersion": "kargo.akuity.io/v1alpha1",
    "kind": "ProjectConfig",
    "metadata": {"name": NS, "namespace": NS},
    "spec": {
        "promotionPolicies": [
            {"stage": "dev", "autoPromotionEnabled": True},
            {"stageSelector": {"matchLabels": {"tier": "test"}}, "autoPromotionEnabled": False},
        ]
    },
}
KARGO_WAREHOUSE = {
    "apiVersion": "kargo.akuity.io/v1alpha1",
    "kind": "Warehouse",
    "metadata": {"name": "api", "namespace": NS},
    "spec": {
        "freightCreationPolicy": "Automatic",
        "subscriptions": [
            {"git": {"repoURL": "https://git.example.com/payments/api.git", "branch": "main"}},
            {"image": {"repoURL": "registry.example.com/payments/api"}},
        ],
    },
}
KARGO_STAGE = {
    "apiVersion": "kargo.akuity.io/v1alpha1",
    "kind": "Stage",
    "metadata": {"name": "dev", "namespace": NS},
    "spec": {
        "requestedFreight": [
            {"origin": {"kind": "Warehouse", "name": "api"}, "sources": {"direct": True}}
        ],
        "promotionTemplate": {
            "spec": {
                "vars": [{"name": "gitRepo", "value": "https://git.example.com/payments/api.git"}],
                "steps": [
                    {
                        "uses": "git-clone",
                        "config": {
                            "repoURL": "${{ vars.gitRepo }}",
                            "checkout": [{"branch": "main", "path": "./src"}],
                        },
                    },
                    {
                        "uses": "git-commit",
                        "as": "commit",
                        "config": {"path": "./src", "message": "promote"},
                        "retry": {"errorThreshold": 3},
                    },
                    {"uses": "git-push", "config": {"path": "./src"}},
                    {
                        "uses": "argocd-update",
                        "config": {"apps": [{"name": "api", "namespace": NS}]},
                    },
                ],
            }
        },
    },
}
GIT_REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "GitRepository",
    "metadata": {"name": "api", "namespace": NS},
    "spec": {
        "interval": "1m",
        "url": "https://git.example.com/payments/api.git",
        "ref": {"branch": "main"},
        "secretRef": {"name": "git-credentials"},
        "timeout": "60s",
    },
}
KUSTOMIZATION = {
    "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
    "kind": "Kustomization",
    "metadata": {"name": "api", "namespace": NS},
    "spec": {
        "interval": "10m",
        "serviceAccountName": "deployer",
        "targetNamespace": NS,
        "sourceRef": {"kind": "GitRepository", "name": "api"},
        "path": "./deploy",
        "prune": True,
        "timeout": "2m",
    },
}

CRD_VALID = [
    APP_PROJECT,
    APPLICATION,
    KARGO_PROJECT,
    KARGO_PROJECT_CONFIG,
    KARGO_WAREHOUSE,
    KARGO_STAGE,
    GIT_REPOSITORY,
    KUSTOMIZATION,
]


@needs_crds
@pytest.mark.parametrize("obj", CRD_VALID, ids=lambda obj: obj["kind"])
def test_valid_custom_resources_pass(obj):
    assert validate_object(obj) == []


@needs_crds
def test_unknown_custom_resource_fields_are_refused():
    project = copy.deepcopy(APP_PROJECT)
    project["spec"]["sourceRepo"] = ["*"]
    project["spec"]["roles"][0]["group"] = ["typo"]
    assert sorted(validate_object(project), key=lambda error: error.path) == [
        SchemaError("spec.roles[0].group", "unknown field 'group'"),
        SchemaError("spec.sourceRepo", "unknown field 'sourceRepo'"),
    ]
    application = copy.deepcopy(APPLICATION)
    application["spec"]["destination"]["cluster"] = "in-cluster"
    application["spec"]["syncPolicy"]["automated"]["purge"] = True
    assert sorted(paths(validate_object(application))) == [
        "spec.destination.cluster",
        "spec.syncPolicy.automated.purge",
    ]


@needs_crds
def test_a_custom_resource_checked_before_is_judged_the_same_with_other_metadata():
    """Its schema is checked once per body (the tenant's AppProject in every plan of a
    batch): what differs in metadata is still checked, against ObjectMeta, every time."""
    bad = copy.deepcopy(APP_PROJECT)
    bad["spec"]["sourceRepo"] = ["*"]
    first = validate_object(bad)
    again = copy.deepcopy(bad)
    again["metadata"]["labels"] = {"berth.dev/request": "7"}
    assert (
        validate_object(again)
        == first
        == [SchemaError("spec.sourceRepo", "unknown field 'sourceRepo'")]
    )
    again["metadata"]["labels"] = {"berth.dev/request": 7}
    assert sorted(paths(validate_object(again))) == [
        'metadata.labels["berth.dev/request"]',
        "spec.sourceRepo",
    ]
    good = copy.deepcopy(APP_PROJECT)
    good["metadata"]["labels"] = {"berth.dev/request": "8"}
    assert validate_object(good) == []


@needs_crds
def test_kargo_project_has_no_spec():
    project = copy.deepcopy(KARGO_PROJECT)
    project["spec"] = {"promotionPolicies": [{"stage": "dev", "autoPromotionEnabled": True}]}
    assert validate_object(project) == [SchemaError("spec", "unknown field 'spec'")]


@needs_crds
def test_custom_resource_metadata_is_checked_against_object_meta():
    project = copy.deepcopy(KARGO_PROJECT)
    project["metadata"]["namespace"] = NS  # Project is cluster-scoped
    project["metadata"]["labels"]["n"] = 1
    project["metadata"]["lables"] = {}
    assert sorted(paths(validate_object(project))) == [
        "metadata.labels.n",
        "metadata.lables",
        "metadata.namespace",
    ]
    stage = copy.deepcopy(KARGO_STAGE)
    del stage["metadata"]["name"]
    assert paths(validate_object(stage)) == ["metadata.name"]


@needs_crds
def test_custom_resource_types_required_enums_and_patterns():
    kustomization = copy.deepcopy(KUSTOMIZATION)
    del kustomization["spec"]["prune"]
    kustomization["spec"]["interval"] = "10 minutes"
    kustomization["spec"]["sourceRef"]["kind"] = "GitRepo"
    kustomization["spec"]["suspend"] = "false"
    errors = {error.path: error.message for error in validate_object(kustomization)}
    assert errors == {
        "spec.prune": "required field is missing",
        "spec.interval": r"'10 minutes' does not match pattern ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$",
        "spec.sourceRef.kind": errors["spec.sourceRef.kind"],
        "spec.suspend": "expected boolean, got string",
    }
    assert errors["spec.sourceRef.kind"].startswith("'GitRepo' is not one of 'OCIRepository'")


@needs_crds
def test_custom_resource_required_fields_and_int_formats():
    stage = copy.deepcopy(KARGO_STAGE)
    del stage["spec"]["requestedFreight"][0]["origin"]["name"]
    stage["spec"]["promotionTemplate"]["spec"]["steps"][1]["retry"]["errorThreshold"] = 2**40
    assert sorted(paths(validate_object(stage))) == [
        "spec.promotionTemplate.spec.steps[1].retry.errorThreshold",
        "spec.requestedFreight[0].origin.name",
    ]
    empty_freight = copy.deepcopy(KARGO_STAGE)
    empty_freight["spec"]["requestedFreight"] = []
    assert paths(validate_object(empty_freight)) == ["spec.requestedFreight"]


@needs_crds
def test_required_field_with_a_default_may_be_omitted():
    # Warehouse spec.interval is required but defaulted (5m0s) by the API server
    assert "interval" not in KARGO_WAREHOUSE["spec"]
    assert validate_object(KARGO_WAREHOUSE) == []


@needs_crds
def test_unserved_crd_version_is_an_error():
    repo = copy.deepcopy(GIT_REPOSITORY)
    repo["apiVersion"] = "source.toolkit.fluxcd.io/v1beta2"
    assert paths(validate_object(repo)) == ["apiVersion"]


@needs_crds
def test_unknown_custom_kind_is_an_error():
    assert paths(validate_object({**KARGO_PROJECT, "apiVersion": "example.com/v1"})) == ["kind"]
    assert paths(validate_object({**KARGO_PROJECT, "kind": "Projekt"})) == ["kind"]


@needs_crds
def test_validate_objects_mixes_builtin_and_custom_kinds():
    bad_app = copy.deepcopy(APPLICATION)
    del bad_app["spec"]["project"]
    result = validate_objects([NAMESPACE, APP_PROJECT, bad_app, KUSTOMIZATION])
    assert result == {
        "Application/payments/api": [SchemaError("spec.project", "required field is missing")]
    }


def test_missing_crd_directory_raises_schema_unavailable(tmp_path, monkeypatch):
    monkeypatch.delenv(schema.CRD_DIR_ENV, raising=False)
    with pytest.raises(SchemaUnavailable, match="does not exist"):
        validate_object(KARGO_PROJECT, crd_dir=tmp_path / "missing")
    with pytest.raises(SchemaUnavailable):
        validate_objects([NAMESPACE, GIT_REPOSITORY], crd_dir=tmp_path / "missing")
    monkeypatch.setenv(schema.CRD_DIR_ENV, str(tmp_path / "missing"))
    assert crd_directory() is None
    with pytest.raises(SchemaUnavailable, match=schema.CRD_DIR_ENV):
        validate_object(KARGO_PROJECT)


def test_without_berth_crd_dir_no_crds_are_looked_for_beside_the_installation(monkeypatch):
    # Berth's own checkouts keep the upstream CRDs in ../shared/crds; an installation reads
    # CRDs from $BERTH_CRD_DIR only, and says so when a custom kind cannot be checked.
    monkeypatch.delenv(schema.CRD_DIR_ENV, raising=False)
    assert crd_directory() is None
    with pytest.raises(SchemaUnavailable, match=r"\$BERTH_CRD_DIR is not set"):
        validate_object(KARGO_PROJECT)
    assert validate_object(NAMESPACE) == []  # built-in kinds need no CRDs


@needs_crds
def test_crd_directory_from_environment(tmp_path, monkeypatch):
    shutil.copy(CRD_DIR / "kargo" / "kargo.akuity.io_projects.yaml", tmp_path)
    monkeypatch.setenv(schema.CRD_DIR_ENV, str(tmp_path))
    assert crd_directory() == tmp_path.resolve()
    assert validate_object(KARGO_PROJECT) == []
    assert paths(validate_object(KARGO_STAGE)) == ["kind"]  # not in this directory
