"""Refusals as kube-apiserver words them: decoding (400), validation (422 with causes),
fieldValidation, quantities, immutable fields, protected namespaces, media types; and the
OpenAPI documents kubectl reads."""

from __future__ import annotations

import json
from pathlib import Path

import urllib3

from kubesandbox import KubeSandbox

from .conftest import raw

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "shortNames": ["wd"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.size != 'L' || self.replicas >= 2",
                                        "messageExpression": "'a large widget needs 2 replicas, "
                                        "not ' + "
                                        "string(self.replicas)",
                                    }
                                ],
                                "properties": {
                                    "size": {
                                        "type": "string",
                                        "enum": ["S", "M", "L"],
                                        "x-kubernetes-validations": [
                                            {
                                                "rule": "self == oldSelf",
                                                "message": "size cannot be changed",
                                            }
                                        ],
                                    },
                                    "replicas": {"type": "integer", "default": 1, "maximum": 10},
                                    "extra": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"ready": {"type": "boolean"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def post(sandbox: KubeSandbox, path: str, body: object, query: str = "") -> tuple:
    response = urllib3.request(
        "POST",
        f"{sandbox.url}{path}{query}",
        body=json.dumps(body),
        headers={"Content-Type": "application/json"},
        retries=False,
    )
    return response.status, response.json(), response.headers.get("Warning")


def merge_patch(sandbox: KubeSandbox, path: str, body: object) -> tuple:
    return raw(
        sandbox, "PATCH", path, body, headers={"Content-Type": "application/merge-patch+json"}
    )


def test_missing_and_invalid_fields_are_422_with_causes(sandbox: KubeSandbox, team: str) -> None:
    status, body = raw(
        sandbox,
        "POST",
        f"/apis/apps/v1/namespaces/{team}/deployments",
        {
            "metadata": {"name": "Web_1"},
            "spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}},
        },
    )
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith(
        'Deployment.apps "Web_1" is invalid: [metadata.name: Invalid '
        'value: "Web_1": a lowercase RFC 1123 subdomain'
    )
    fields = {c["field"]: c["reason"] for c in body["details"]["causes"]}
    assert fields == {
        "metadata.name": "FieldValueInvalid",
        "spec.selector": "FieldValueRequired",
        "spec.template.spec.containers[0].name": "FieldValueRequired",
    }


def test_a_wrong_type_does_not_decode(sandbox: KubeSandbox, team: str) -> None:
    status, body = raw(
        sandbox,
        "POST",
        f"/apis/apps/v1/namespaces/{team}/deployments",
        {"metadata": {"name": "web"}, "spec": {"replicas": "three"}},
    )
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: '
        "json: cannot unmarshal string into Go struct field "
        "spec.replicas of type int32"
    )


def test_unknown_fields_follow_field_validation(sandbox: KubeSandbox, team: str) -> None:
    path = f"/api/v1/namespaces/{team}/configmaps"
    body = {"metadata": {"name": "a", "colour": "red"}, "data": {"k": "v"}, "size": 3}
    status, answer, warning = post(sandbox, path, body)  # the server's default is Warn
    assert status == 201
    assert (
        warning == '299 - "unknown field \\"metadata.colour\\"", 299 - "unknown field \\"size\\""'
    )
    assert "size" not in answer and "colour" not in answer["metadata"]
    status, answer, warning = post(
        sandbox, path, {**body, "metadata": {"name": "b"}}, "?fieldValidation=Ignore"
    )
    assert (status, warning) == (201, None)
    status, answer, _ = post(
        sandbox, path, {**body, "metadata": {"name": "c"}}, "?fieldValidation=Strict"
    )
    assert status == 400
    assert answer["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: unknown field "size"'
    )


def test_quantities_are_parsed(sandbox: KubeSandbox, team: str) -> None:
    path = f"/api/v1/namespaces/{team}/resourcequotas"
    quota = {"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "lots"}}}
    status, body = raw(sandbox, "POST", path, quota)
    assert status == 400
    assert body["message"].endswith(
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    quota["spec"]["hard"] = {"requests.cpu": "500m", "requests.memory": "1.5Gi", "pods": 10}
    assert raw(sandbox, "POST", path, quota)[0] == 201


def test_a_binding_needs_a_role_ref_and_may_not_change_it(sandbox: KubeSandbox, team: str) -> None:
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{team}/rolebindings"
    subjects = [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]
    status, body = raw(sandbox, "POST", path, {"metadata": {"name": "rb"}, "subjects": subjects})
    assert status == 422
    assert {c["field"] for c in body["details"]["causes"]} == {
        "roleRef.apiGroup",
        "roleRef.kind",
        "roleRef.name",
    }
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    raw(sandbox, "POST", path, {"metadata": {"name": "rb"}, "subjects": subjects, "roleRef": ref})
    status, body = merge_patch(sandbox, f"{path}/rb", {"roleRef": {"name": "edit"}})
    assert status == 422
    assert body["message"] == (
        'RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef: Invalid value: '
        'v1.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
        "cannot change roleRef"
    )


def test_system_namespaces_cannot_be_deleted(sandbox: KubeSandbox) -> None:
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        status, body = raw(sandbox, "DELETE", f"/api/v1/namespaces/{name}")
        assert (status, body["message"]) == (
            403,
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
        )


def test_bodies_in_other_media_types_are_415(sandbox: KubeSandbox, team: str) -> None:
    status, body = raw(
        sandbox,
        "POST",
        f"/api/v1/namespaces/{team}/configmaps",
        "a,b",
        headers={"Content-Type": "text/csv"},
    )
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")
    yaml_body = "metadata: {name: from-yaml}\ndata: {k: v}\n"
    status, body = raw(
        sandbox,
        "POST",
        f"/api/v1/namespaces/{team}/configmaps",
        yaml_body,
        headers={"Content-Type": "application/yaml"},
    )
    assert (status, body["data"]) == (201, {"k": "v"})


def test_a_crd_is_served_with_pruning_defaults_and_validation(
    sandbox: KubeSandbox, team: str
) -> None:
    assert raw(sandbox, "POST", CRDS, WIDGETS_CRD)[0] == 201
    crd = raw(sandbox, "GET", f"{CRDS}/widgets.example.com")[1]
    assert {c["type"]: c["status"] for c in crd["status"]["conditions"]} == {
        "NamesAccepted": "True",
        "Established": "True",
    }
    found = raw(sandbox, "GET", "/apis/example.com/v1")[1]["resources"]
    assert [r["name"] for r in found] == ["widgets", "widgets/status"]
    path = f"/apis/example.com/v1/namespaces/{team}/widgets"
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": "M", "colour": "red", "extra": {"anything": {"goes": 1}}},
    }
    status, created, warning = post(sandbox, path, widget)
    assert status == 201
    assert created["spec"] == {"size": "M", "replicas": 1, "extra": {"anything": {"goes": 1}}}
    assert warning == '299 - "unknown field \\"spec.colour\\""'
    status, body, _ = post(
        sandbox, path, {**widget, "metadata": {"name": "x"}}, "?fieldValidation=Strict"
    )
    assert status == 400 and 'unknown field "spec.colour"' in body["message"]
    bad = {**widget, "metadata": {"name": "y"}, "spec": {"size": "XL", "replicas": 50}}
    status, body = raw(sandbox, "POST", path, bad)
    assert status == 422
    assert body["message"].startswith('Widget.example.com "y" is invalid: [')
    assert {c["message"] for c in body["details"]["causes"]} == {
        'Unsupported value: "XL": supported values: "S", "M", "L"',
        "Invalid value: 50: spec.replicas in body should be less than or equal to 10",
    }
    status, body = raw(sandbox, "POST", path, {**widget, "metadata": {"name": "z"}, "spec": {}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec.size")
    status, body = raw(
        sandbox, "POST", path, {**widget, "metadata": {"name": "l"}, "spec": {"size": "L"}}
    )
    assert (status, body["details"]["causes"]) == (
        422,
        [
            {
                "reason": "FieldValueInvalid",
                "field": "spec",
                "message": 'Invalid value: "object": a large widget needs 2 replicas, not 1',
            }
        ],
    )
    status, body = merge_patch(sandbox, f"{path}/w", {"spec": {"size": "S"}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec.size")
    assert "size cannot be changed" in body["message"]
    assert raw(sandbox, "DELETE", f"{CRDS}/widgets.example.com")[0] == 200
    assert raw(sandbox, "GET", path)[0] == 404


def test_a_crd_must_be_named_after_its_plural_and_group(sandbox: KubeSandbox) -> None:
    wrong = {**WIDGETS_CRD, "metadata": {"name": "gadgets.example.com"}}
    status, body = raw(sandbox, "POST", CRDS, wrong)
    assert status == 422
    assert 'must be spec.names.plural+"."+spec.group' in body["message"]


def test_openapi_v3_lists_group_versions_and_offers_field_validation(
    sandbox: KubeSandbox,
) -> None:
    status, root = raw(sandbox, "GET", "/openapi/v3")
    assert status == 200
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    document = raw(sandbox, "GET", url)[1]
    patch = document["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "version": "v1",
        "kind": "Deployment",
    }
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    deployment = document["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["properties"]["spec"] == {
        "$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec",
        "description": "Specification of the desired behavior of the Deployment.",
    }
    assert raw(sandbox, "GET", "/openapi/v3/apis/example.com/v1")[0] == 404


def test_a_state_file_brings_back_crds_and_their_objects(tmp_path: Path) -> None:
    state = tmp_path / "cluster.json"
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": "S"},
    }
    with KubeSandbox(state_file=state) as first:
        assert raw(first, "POST", CRDS, WIDGETS_CRD)[0] == 201
        assert (
            raw(first, "POST", "/apis/example.com/v1/namespaces/default/widgets", widget)[0] == 201
        )
    saved = json.loads(state.read_text())
    saved["objects"].append(
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": "gone", "namespace": "default"},
        }
    )
    state.write_text(json.dumps(saved))
    with KubeSandbox(state_file=state) as second:
        status, body = raw(second, "GET", "/apis/example.com/v1/namespaces/default/widgets/w")
        assert (status, body["spec"]) == (200, {"size": "S", "replicas": 1})
        assert raw(second, "GET", "/apis/cert-manager.io/v1")[0] == 404
        assert second.get("ClusterRole", "cluster-admin") is not None
