"""provisioning.schema: offline validation of built-in kinds against the Kubernetes client's
models (no Django, no database, no CRDs): unknown fields, wrong types, missing required
fields, metadata, unknown apiVersions or kinds, and validate_objects' report by key."""

import copy

import pytest

from provisioning.schema import SchemaError, builtin, validate_object, validate_objects
from provisioning.schema import common as schema_common
from tests.support.schema_objects import (
    BUILTIN_VALID,
    CONFIG_MAP,
    DEPLOYMENT,
    NAMESPACE,
    NETWORK_POLICY,
    NS,
    RESOURCE_QUOTA,
    ROLE,
    ROLE_BINDING,
    SERVICE,
    SERVICE_ACCOUNT,
    paths,
)


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
