"""provisioning.schema: offline validation of rendered manifests (no Django, no database)."""

import copy
import shutil

import pytest

from provisioning import schema
from provisioning.schema import (
    SchemaError,
    SchemaUnavailable,
    builtin,
    crd_directory,
    validate_object,
    validate_objects,
)
from provisioning.schema import common as schema_common

CRD_DIR = crd_directory()
needs_crds = pytest.mark.crds  # skipped where $BERTH_CRD_DIR names none (tests/conftest.py)

NS = "payments"


def meta(name, **extra):
    return {"name": name, "namespace": NS, **extra}


def paths(errors):
    return [error.path for error in errors]


# --------------------------------------------------------------------------------------------
# Built-in kinds

NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": NS,
        "labels": {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": NS},
        "annotations": {"berth.dev/owner": "team-payments"},
    },
}
RESOURCE_QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": meta("compute"),
    "spec": {"hard": {"requests.cpu": "4", "requests.memory": "8Gi", "pods": "20"}},
}
LIMIT_RANGE = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": meta("defaults"),
    "spec": {
        "limits": [
            {
                "type": "Container",
                "default": {"cpu": "500m", "memory": "512Mi"},
                "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
                "max": {"cpu": "2", "memory": "2Gi"},
            }
        ]
    },
}
NETWORK_POLICY = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": meta("default-deny"),
    "spec": {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [
            {"from": [{"podSelector": {}}, {"namespaceSelector": {"matchLabels": {"a": "b"}}}]}
        ],
        "egress": [
            {
                "to": [{"namespaceSelector": {"matchLabels": {"name": "kube-system"}}}],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": "dns-tcp"}],
            },
            {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]},
        ],
    },
}
SERVICE_ACCOUNT = {
    "apiVersion": "v1",
    "kind": "ServiceAccount",
    "metadata": meta("deployer"),
    "automountServiceAccountToken": False,
}
ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "Role",
    "metadata": meta("developer"),
    "rules": [
        {"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["get", "list"]}
    ],
}
ROLE_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "RoleBinding",
    "metadata": meta("developers"),
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "developer"},
    "subjects": [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "payments-devs"},
        {"kind": "ServiceAccount", "name": "deployer", "namespace": NS},
    ],
}
CLUSTER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "berth-namespace-reader"},
    "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}],
}
CLUSTER_ROLE_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "payments-namespace-reader"},
    "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "berth-namespace-reader",
    },
    "subjects": [{"kind": "Group", "name": "payments-devs"}],
}
CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": meta("settings"),
    "data": {"LOG_LEVEL": "info"},
    "binaryData": {"blob": "aGVsbG8="},
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": meta("api", labels={"app": "api"}),
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "api"}},
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0},
        },
        "template": {
            "metadata": {"labels": {"app": "api"}},
            "spec": {
                "serviceAccountName": "deployer",
                "containers": [
                    {
                        "name": "api",
                        "image": "registry.example.com/payments/api:1.2.3",
                        "ports": [{"name": "http", "containerPort": 8080}],
                        "env": [{"name": "LOG_LEVEL", "value": "info"}],
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"memory": "256Mi"},
                        },
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                    }
                ],
            },
        },
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": meta("api"),
    "spec": {
        "selector": {"app": "api"},
        "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
    },
}
INGRESS = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": meta("api"),
    "spec": {
        "ingressClassName": "nginx",
        "tls": [{"hosts": ["api.payments.example.com"], "secretName": "api-tls"}],
        "rules": [
            {
                "host": "api.payments.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "api", "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ],
    },
}
VALIDATING_ADMISSION_POLICY = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "berth-tenant-labels"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["deployments"],
                }
            ]
        },
        "validations": [
            {"expression": "has(object.metadata.labels)", "message": "labels are required"}
        ],
    },
}
VALIDATING_ADMISSION_POLICY_BINDING = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicyBinding",
    "metadata": {"name": "berth-tenant-labels-payments"},
    "spec": {
        "policyName": "berth-tenant-labels",
        "validationActions": ["Deny"],
        "matchResources": {"namespaceSelector": {"matchLabels": {"berth.dev/tenant": NS}}},
    },
}

BUILTIN_VALID = [
    NAMESPACE,
    RESOURCE_QUOTA,
    LIMIT_RANGE,
    NETWORK_POLICY,
    SERVICE_ACCOUNT,
    ROLE,
    ROLE_BINDING,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    CONFIG_MAP,
    DEPLOYMENT,
    SERVICE,
    INGRESS,
    VALIDATING_ADMISSION_POLICY,
    VALIDATING_ADMISSION_POLICY_BINDING,
]


@pytest.mark.parametrize("obj", BUILTIN_VALID, ids=lambda obj: obj["kind"])
def test_valid_builtin_objects_pass(obj):
    assert validate_object(obj) == []


def test_builtin_validation_needs_no_crd_directory(tmp_path):
    assert validate_object(NAMESPACE, crd_dir=tmp_path / "missing") == []


def test_unknown_field_is_refused_with_its_path():
    obj = copy.deepcopy(NETWORK_POLICY)
    obj["spec"]["podSelectr"] = obj["spec"].pop("podSelector")
    obj["spec"]["egress"][0]["ports"][1]["prot"] = "TCP"
    assert sorted(validate_object(obj), key=lambda error: error.path) == [
        SchemaError("spec.egress[0].ports[1].prot", "unknown field 'prot' (V1NetworkPolicyPort)"),
        SchemaError("spec.podSelectr", "unknown field 'podSelectr' (V1NetworkPolicySpec)"),
    ]


def test_unknown_top_level_and_metadata_fields_are_refused():
    obj = copy.deepcopy(NAMESPACE)
    obj["spek"] = {}
    obj["metadata"]["label"] = {"a": "b"}
    assert sorted(paths(validate_object(obj))) == ["metadata.label", "spek"]


def test_wrong_type_is_refused():
    obj = copy.deepcopy(NETWORK_POLICY)
    obj["spec"]["egress"][0]["ports"][0]["port"] = [53]
    obj["spec"]["policyTypes"] = "Ingress"
    errors = validate_object(obj)
    assert errors == [
        SchemaError("spec.policyTypes", "expected array, got string"),
        SchemaError("spec.egress[0].ports[0].port", "expected integer or string, got array"),
    ]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("spec", "replicas"), "2"),
        (("spec", "replicas"), True),
        (("spec", "paused"), "false"),
        (("spec", "strategy", "rollingUpdate", "maxSurge"), 1.5),
        (("spec", "template", "spec", "containers", 0, "image"), 1),
        (("spec", "template", "spec", "containers", 0, "resources", "limits", "memory"), 256),
    ],
)
def test_scalar_type_mismatches_are_refused(path, value):
    obj = copy.deepcopy(DEPLOYMENT)
    target = obj
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    errors = validate_object(obj)
    assert len(errors) == 1, errors
    assert errors[0].path == schema_common.format_path(path)
    assert errors[0].message.startswith("expected ")


def test_int_or_string_accepts_both():
    obj = copy.deepcopy(SERVICE)
    obj["spec"]["ports"][0]["targetPort"] = 8080
    assert validate_object(obj) == []
    obj["spec"]["ports"][0]["targetPort"] = True
    assert paths(validate_object(obj)) == ["spec.ports[0].targetPort"]


def test_quantities_must_be_strings():
    obj = copy.deepcopy(RESOURCE_QUOTA)
    obj["spec"]["hard"]["requests.cpu"] = 4
    errors = validate_object(obj)
    assert paths(errors) == ['spec.hard["requests.cpu"]']
    assert "quoted strings" in errors[0].message


def test_labels_must_be_strings():
    obj = copy.deepcopy(NAMESPACE)
    obj["metadata"]["labels"]["replicas"] = 3
    assert paths(validate_object(obj)) == ["metadata.labels.replicas"]


def test_missing_required_field_is_refused():
    obj = copy.deepcopy(ROLE_BINDING)
    del obj["roleRef"]
    del obj["subjects"][1]["name"]
    assert validate_object(obj) == [
        SchemaError("subjects[1].name", "required field is missing"),
        SchemaError("roleRef", "required field is missing"),
    ]


def test_metadata_name_is_required():
    obj = copy.deepcopy(SERVICE_ACCOUNT)
    obj["metadata"] = {"generateName": "deployer-", "namespace": NS}
    assert paths(validate_object(obj)) == ["metadata.name"]
    del obj["metadata"]
    assert paths(validate_object(obj)) == ["metadata"]


def test_namespace_on_cluster_scoped_kind_is_refused():
    obj = copy.deepcopy(NAMESPACE)
    obj["metadata"]["namespace"] = "default"
    assert paths(validate_object(obj)) == ["metadata.namespace"]


def test_null_is_refused():
    obj = copy.deepcopy(SERVICE_ACCOUNT)
    obj["automountServiceAccountToken"] = None
    assert validate_object(obj) == [
        SchemaError("automountServiceAccountToken", "must not be null (omit the field instead)")
    ]


def test_bytes_and_datetime_formats_are_checked():
    obj = copy.deepcopy(CONFIG_MAP)
    obj["binaryData"]["blob"] = "not base64!"
    obj["metadata"]["creationTimestamp"] = "yesterday"
    assert sorted(paths(validate_object(obj))) == ["binaryData.blob", "metadata.creationTimestamp"]


@pytest.mark.parametrize(
    ("api_version", "kind", "path"),
    [
        ("v1", "Namespce", "kind"),
        ("apps/v1", "NetworkPolicy", "kind"),  # right kind, wrong group
        ("v1", "Deployment", "kind"),
        ("apps/v1beta1", "Deployment", "apiVersion"),
        ("core/v1", "Namespace", "kind"),  # looks like core, is not a built-in group
        ("v1", "Eviction", "kind"),  # a subresource body, not a kind of core/v1
        ("networking.k8s.io", "NetworkPolicy", "apiVersion"),
        (None, "Namespace", "apiVersion"),
        ("v1", "", "kind"),
    ],
)
def test_unknown_api_version_or_kind_is_an_error(api_version, kind, path, tmp_path):
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    # a CRD directory is only consulted for non-built-in groups; give an empty one
    errors = validate_object(obj, crd_dir=tmp_path)
    assert paths(errors) == [path], errors


def test_not_a_mapping_is_an_error():
    assert validate_object(["not", "an", "object"]) == [
        SchemaError("", "object must be a mapping, got array")
    ]


def test_kind_mapping_uses_the_client_models():
    assert builtin.builtin_kinds("networking.k8s.io", "v1")["NetworkPolicy"] == (
        "V1NetworkPolicy",
        True,
    )
    assert builtin.builtin_kinds("rbac.authorization.k8s.io", "v1")["RoleBinding"] == (
        "V1RoleBinding",
        True,
    )
    assert builtin.builtin_kinds("admissionregistration.k8s.io", "v1")[
        "ValidatingAdmissionPolicy"
    ] == ("V1ValidatingAdmissionPolicy", False)
    assert builtin.builtin_kinds("", "v1")["Event"] == ("CoreV1Event", True)
    assert builtin.builtin_kinds("events.k8s.io", "v1")["Event"] == ("EventsV1Event", True)


def test_every_client_type_reachable_from_berth_kinds_is_understood():
    """A new type spelling in a client upgrade must fail here, not at provisioning time."""
    pending = [
        builtin.builtin_kinds(*obj["apiVersion"].rpartition("/")[::2])[obj["kind"]][0]
        for obj in BUILTIN_VALID
    ]
    seen = set()
    while pending:
        cls_name = pending.pop()
        if cls_name in seen:
            continue
        seen.add(cls_name)
        for field in builtin.model_fields(cls_name).values():
            shape, arg = builtin.parse_type(field.type)
            while shape in ("list", "map"):
                shape, arg = builtin.parse_type(arg)
            if shape == "model":
                pending.append(arg)
    assert len(seen) > 100  # the whole PodSpec tree, RBAC, admission policies...


def test_validate_objects_reports_only_failing_objects_by_key():
    bad_binding = copy.deepcopy(ROLE_BINDING)
    del bad_binding["roleRef"]
    bad_namespace = copy.deepcopy(NAMESPACE)
    bad_namespace["metadata"]["labels"]["x"] = 1
    nameless = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": NS}}
    result = validate_objects([NAMESPACE, bad_binding, ROLE, bad_namespace, nameless, bad_binding])
    label_error = result["Namespace/payments"][0].message
    assert label_error.startswith("expected string, got integer")
    assert result == {
        "RoleBinding/payments/developers": [SchemaError("roleRef", "required field is missing")],
        "Namespace/payments": [SchemaError("metadata.labels.x", label_error)],
        "ConfigMap/payments/#4": [
            SchemaError("metadata.name", result["ConfigMap/payments/#4"][0].message)
        ],
        "RoleBinding/payments/developers #5": [SchemaError("roleRef", "required field is missing")],
    }
    assert validate_objects(BUILTIN_VALID) == {}


def test_schema_error_str():
    assert str(SchemaError("spec.x", "boom")) == "spec.x: boom"
    assert str(SchemaError("", "boom")) == "boom"


# --------------------------------------------------------------------------------------------
# Custom resources (upstream CRDs)

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


TOY_CRD = """\
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: toys.example.com
spec:
  group: example.com
  names: {kind: Toy, plural: toys}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size, mode]
            x-kubernetes-validations:
            - rule: self.size != 'never'
            properties:
              size: {x-kubernetes-int-or-string: true}
              mode: {type: string, default: fast, enum: [fast, slow]}
              note: {type: string, nullable: true}
              code: {type: string, pattern: '^\\w+$'}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              labels: {type: object, additionalProperties: {type: string}}
              empty: {type: object}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: globals.example.com
spec:
  group: example.com
  names: {kind: Global, plural: globals}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
"""


def test_structural_schema_translation(tmp_path):
    (tmp_path / "toys.yml").write_text(TOY_CRD)
    toy = {
        "apiVersion": "example.com/v1",
        "kind": "Toy",
        "metadata": {"name": "t", "namespace": NS},
        "spec": {
            "size": "never",  # CEL rules are not evaluated
            "note": None,  # nullable
            "code": "abc_1",
            "extra": {"free": {"form": [1, 2]}},
            "labels": {"a": "b"},
            "empty": {},
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": []},
            },
        },
    }
    assert validate_object(toy, crd_dir=tmp_path) == []
    toy["spec"].update(size=3, mode="slow")
    assert validate_object(toy, crd_dir=tmp_path) == []

    bad = copy.deepcopy(toy)
    bad["spec"].update(size=[3], code="åbc", labels={"a": 1}, empty={"x": 1}, mode="medium", sise=1)
    bad["spec"]["template"]["bogus"] = True
    assert sorted(paths(validate_object(bad, crd_dir=tmp_path))) == [
        "spec.code",  # \\w is ASCII, as in Go
        "spec.empty.x",
        "spec.labels.a",
        "spec.mode",
        "spec.sise",
        "spec.size",
        "spec.template.bogus",
    ]
    del bad["spec"]["size"]
    assert "spec.size" in paths(validate_object(bad, crd_dir=tmp_path))

    assert paths(validate_object({**toy, "apiVersion": "example.com/v0"}, crd_dir=tmp_path)) == [
        "apiVersion"
    ]
    glob = {"apiVersion": "example.com/v1", "kind": "Global", "metadata": {"name": "g"}}
    assert validate_object(glob, crd_dir=tmp_path) == []
    glob["metadata"]["namespace"] = NS
    assert paths(validate_object(glob, crd_dir=tmp_path)) == ["metadata.namespace"]


def test_duplicate_crds_are_refused(tmp_path):
    (tmp_path / "a.yaml").write_text(TOY_CRD)
    (tmp_path / "b.yaml").write_text(TOY_CRD)
    with pytest.raises(ValueError, match="defined twice"):
        validate_object({"apiVersion": "example.com/v1", "kind": "Toy"}, crd_dir=tmp_path)
