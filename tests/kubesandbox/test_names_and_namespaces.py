"""Names and labels the real server refuses, namespaces that terminate and take their
content with them."""

from __future__ import annotations

import base64
import time

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from kubesandbox import KubeSandbox

from .conftest import (
    KARGO,
    apply_config_map,
    config_map,
    meta,
    raw,
    status_of,
)


def test_create_in_missing_namespace_is_404(core: client.CoreV1Api, dynamic: DynamicClient) -> None:
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map("nowhere", config_map("settings"))
    assert error.value.status == 404
    assert status_of(error)["message"] == 'namespaces "nowhere" not found'
    assert status_of(error)["details"] == {"name": "nowhere", "kind": "namespaces"}
    with pytest.raises(ApiException) as error:
        apply_config_map(dynamic, {"a": "1"})  # team-a does not exist here
    assert error.value.status == 404


@pytest.mark.parametrize("name", ["Team-A", "team_a", "-team", "a" * 64, "team.a"])
def test_invalid_namespace_name_is_422(core: client.CoreV1Api, name: str) -> None:
    with pytest.raises(ApiException) as error:
        core.create_namespace(client.V1Namespace(metadata=meta(name)))
    assert error.value.status == 422
    assert status_of(error)["details"]["causes"][0]["field"] == "metadata.name"


@pytest.mark.parametrize("name", ["Settings", "bad_name", "x" * 254, "trailing-"])
def test_invalid_object_name_is_422(core: client.CoreV1Api, team: str, name: str) -> None:
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map(team, config_map(name))
    assert error.value.status == 422
    assert status_of(error)["reason"] == "Invalid"


def test_dotted_object_names_are_valid_subdomains(core: client.CoreV1Api, team: str) -> None:
    assert core.create_namespaced_config_map(team, config_map("a.b-c")).metadata.name == "a.b-c"


def test_missing_name_is_422(sandbox: KubeSandbox, team: str) -> None:
    status, body = raw(sandbox, "POST", f"/api/v1/namespaces/{team}/configmaps", {"data": {}})
    assert status == 422
    assert body["details"]["causes"][0]["reason"] == "FieldValueRequired"


def test_malformed_body_is_400(sandbox: KubeSandbox, team: str) -> None:
    status, body = raw(sandbox, "POST", f"/api/v1/namespaces/{team}/configmaps", "{not json")
    assert (status, body["reason"]) == (400, "BadRequest")


def test_invalid_label_value_is_422(core: client.CoreV1Api, team: str) -> None:
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map(team, config_map("x", labels={"app": "not valid!"}))
    assert error.value.status == 422


def test_rbac_names_may_contain_colons(rbac: client.RbacAuthorizationV1Api) -> None:
    role = client.V1ClusterRole(metadata=meta("berth:tenant-admin"), rules=[])
    assert rbac.create_cluster_role(role).metadata.name == "berth:tenant-admin"
    with pytest.raises(ApiException) as error:
        rbac.create_cluster_role(client.V1ClusterRole(metadata=meta("a%b")))
    assert error.value.status == 422


def test_new_namespace_is_active_and_labelled_with_its_name(core: client.CoreV1Api) -> None:
    created = core.create_namespace(client.V1Namespace(metadata=meta("team-b")))
    assert created.status.phase == "Active"
    assert created.metadata.labels == {"kubernetes.io/metadata.name": "team-b"}
    assert "default" in {n.metadata.name for n in core.list_namespace().items}


def test_namespace_deletion_cascades_to_its_objects(
    sandbox: KubeSandbox, core: client.CoreV1Api, networking: client.NetworkingV1Api, team: str
) -> None:
    core.create_namespaced_config_map(team, config_map("settings"))
    policy = client.V1NetworkPolicy(metadata=meta("deny"), spec=client.V1NetworkPolicySpec())
    networking.create_namespaced_network_policy(team, policy)
    answer = core.delete_namespace(team)
    assert answer["status"]["phase"] == "Terminating"
    with pytest.raises(ApiException) as error:
        core.read_namespace(team)
    assert error.value.status == 404
    assert sandbox.objects(namespace=team) == []
    assert core.list_config_map_for_all_namespaces().items == []


# Long enough for the checks made while it is Terminating, even on a loaded machine.
@pytest.mark.parametrize("sandbox_options", [{"termination_seconds": 1.0}])
def test_terminating_namespace_refuses_new_content_then_disappears(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    core.create_namespaced_config_map(team, config_map("settings"))
    core.delete_namespace(team)
    terminating = core.read_namespace(team)
    assert terminating.status.phase == "Terminating"
    assert terminating.metadata.deletion_timestamp is not None
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map(team, config_map("late"))
    assert error.value.status == 403
    assert "because it is being terminated" in status_of(error)["message"]
    assert core.read_namespaced_config_map("settings", team).metadata.name == "settings"
    deadline = time.monotonic() + 10
    while sandbox.get("Namespace", team) is not None:
        assert time.monotonic() < deadline, "the namespace never finished terminating"
        time.sleep(0.05)
    assert sandbox.objects("ConfigMap") == []


@pytest.mark.crds
def test_cluster_scoped_kargo_project(
    sandbox: KubeSandbox, custom: client.CustomObjectsApi
) -> None:
    project = {
        "apiVersion": "kargo.akuity.io/v1alpha1",
        "kind": "Project",
        "metadata": {"name": "team-a", "namespace": "ignored"},
    }
    created = custom.create_cluster_custom_object(*KARGO, "projects", project)
    assert "namespace" not in created["metadata"]
    assert custom.get_cluster_custom_object(*KARGO, "projects", "team-a")["kind"] == "Project"
    listed = custom.list_cluster_custom_object(*KARGO, "projects")["items"]
    assert [p["metadata"]["name"] for p in listed] == ["team-a"]
    status, _ = raw(sandbox, "GET", "/apis/kargo.akuity.io/v1alpha1/namespaces/x/projects/team-a")
    assert status == 404


def test_secret_string_data_is_stored_base64_encoded(core: client.CoreV1Api, team: str) -> None:
    secret = client.V1Secret(metadata=meta("creds"), string_data={"password": "hunter2"})
    stored = core.create_namespaced_secret(team, secret)
    assert stored.string_data is None
    assert base64.b64decode(stored.data["password"]) == b"hunter2"
    assert stored.type == "Opaque"
