"""Merge, strategic, JSON patch, the status subresource and server-side apply."""

from __future__ import annotations

import json

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ConflictError, UnprocessibleEntityError

from kubesandbox import KubeSandbox

from .conftest import (
    APPLY,
    ARGO,
    application,
    apply_config_map,
    config_map,
    raw,
)


def test_merge_patch_merges_maps_and_null_deletes(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("settings", {"a": "1", "b": "2"}))
    patched = core.patch_namespaced_config_map(
        "settings",
        team,
        {"data": {"b": None, "c": "3"}},
        _content_type="application/merge-patch+json",
    )
    assert patched.data == {"a": "1", "c": "3"}


def test_default_strategic_merge_patch_works_on_built_in_types(
    core: client.CoreV1Api, team: str
) -> None:
    core.create_namespaced_config_map(team, config_map("settings", {"a": "1"}))
    patched = core.patch_namespaced_config_map("settings", team, {"data": {"b": "2"}})
    assert patched.data == {"a": "1", "b": "2"}


@pytest.mark.crds
def test_strategic_merge_patch_on_custom_resources_is_415(
    custom: client.CustomObjectsApi, team: str
) -> None:
    custom.create_namespaced_custom_object(*ARGO, team, "applications", application("web"))
    with pytest.raises(ApiException) as error:
        custom.patch_namespaced_custom_object(
            *ARGO,
            team,
            "applications",
            "web",
            {"spec": {"project": "other"}},
            _content_type="application/strategic-merge-patch+json",
        )
    assert error.value.status == 415
    merged = custom.patch_namespaced_custom_object(
        *ARGO, team, "applications", "web", {"spec": {"project": "other"}}
    )
    assert merged["spec"]["project"] == "other"


def test_json_patch_applies_rfc6902_operations(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("settings", {"a": "1", "b": "2"}))
    patched = core.patch_namespaced_config_map(
        "settings",
        team,
        [
            {"op": "test", "path": "/data/a", "value": "1"},
            {"op": "replace", "path": "/data/a", "value": "one"},
            {"op": "add", "path": "/metadata/labels", "value": {}},
            {"op": "add", "path": "/metadata/labels/example.com~1team", "value": "a"},
            {"op": "copy", "from": "/data/b", "path": "/data/c"},
            {"op": "move", "from": "/data/b", "path": "/data/d"},
            {"op": "remove", "path": "/data/c"},
        ],
        _content_type="application/json-patch+json",
    )
    assert patched.data == {"a": "one", "d": "2"}
    assert patched.metadata.labels == {"example.com/team": "a"}


def test_failed_json_patch_test_operation_is_422(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("settings", {"a": "1"}))
    with pytest.raises(ApiException) as error:
        core.patch_namespaced_config_map(
            "settings",
            team,
            [{"op": "test", "path": "/data/a", "value": "2"}],
            _content_type="application/json-patch+json",
        )
    assert error.value.status == 422


def test_patch_of_missing_object_is_404(core: client.CoreV1Api, team: str) -> None:
    with pytest.raises(ApiException) as error:
        core.patch_namespaced_config_map("ghost", team, {"data": {"a": "1"}})
    assert error.value.status == 404


def test_generation_bumps_only_when_the_spec_changes(apps: client.AppsV1Api, team: str) -> None:
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }
    assert apps.create_namespaced_deployment(team, deployment).metadata.generation == 1
    relabelled = apps.patch_namespaced_deployment("web", team, {"metadata": {"labels": {"x": "y"}}})
    assert relabelled.metadata.generation == 1
    scaled = apps.patch_namespaced_deployment("web", team, {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2


@pytest.mark.crds
def test_status_is_written_only_through_the_status_subresource(
    custom: client.CustomObjectsApi, team: str
) -> None:
    condition = {
        "type": "Ready",
        "status": "True",
        "reason": "Succeeded",
        "message": "stored artifact",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    repository = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "tls"},
        "spec": {"url": "https://git.example.com/app.git", "interval": "1m"},
        "status": {"conditions": [condition]},
    }
    group = ("source.toolkit.fluxcd.io", "v1", team, "gitrepositories")
    created = custom.create_namespaced_custom_object(*group, repository)
    assert "status" not in created
    ready = {"status": {"conditions": [condition]}}
    ignored = custom.patch_namespaced_custom_object(*group, "tls", ready)
    assert "status" not in ignored
    written = custom.patch_namespaced_custom_object_status(*group, "tls", ready)
    assert written["status"]["conditions"][0]["status"] == "True"
    assert written["metadata"]["generation"] == 1


def test_server_side_apply_creates_missing_object(core: client.CoreV1Api, team: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings"},
        "data": {"a": "1"},
    }
    created, status_code, _ = core.patch_namespaced_config_map_with_http_info(
        "settings", team, body, field_manager="berth", _content_type=APPLY
    )
    assert status_code == 201
    [entry] = created.metadata.managed_fields
    assert (entry.manager, entry.operation) == ("berth", "Apply")
    assert entry.fields_v1 == {"f:data": {"f:a": {}}}


def test_server_side_apply_merges_into_an_existing_object(
    core: client.CoreV1Api, dynamic: DynamicClient, team: str
) -> None:
    core.create_namespaced_config_map(team, config_map("settings", {"mine": "kept"}))
    applied = apply_config_map(dynamic, {"a": "1"})
    assert applied.data.to_dict() == {"mine": "kept", "a": "1"}
    managers = {(m.manager, m.operation) for m in applied.metadata.managedFields}
    assert managers == {("OpenAPI-Generator", "Update"), ("berth", "Apply")}


def test_reapplying_identical_object_keeps_resource_version(
    dynamic: DynamicClient, team: str
) -> None:
    first = apply_config_map(dynamic, {"a": "1"})
    again = apply_config_map(dynamic, {"a": "1"})
    assert again.metadata.resourceVersion == first.metadata.resourceVersion
    changed = apply_config_map(dynamic, {"a": "2"})
    assert int(changed.metadata.resourceVersion) > int(first.metadata.resourceVersion)


def test_server_side_apply_prunes_fields_the_manager_stopped_applying(
    dynamic: DynamicClient, team: str
) -> None:
    apply_config_map(dynamic, {"a": "1", "b": "2"})
    pruned = apply_config_map(dynamic, {"a": "1"})
    assert pruned.data.to_dict() == {"a": "1"}


def test_server_side_apply_conflict_is_409_unless_forced(dynamic: DynamicClient, team: str) -> None:
    apply_config_map(dynamic, {"a": "1"}, manager="berth")
    with pytest.raises(ConflictError) as error:
        apply_config_map(dynamic, {"a": "2"}, manager="someone-else")
    message = json.loads(error.value.body)["message"]
    assert message.startswith("Apply failed with 2 conflict(s)")  # .data.a and the owner label
    assert 'conflict with "berth": .data.a' in message
    forced = apply_config_map(dynamic, {"a": "2"}, manager="someone-else", force_conflicts=True)
    assert forced.data.a == "2"
    # Forcing took both fields over, so berth owns nothing any more.
    assert [m.manager for m in forced.metadata.managedFields] == ["someone-else"]


def test_server_side_apply_requires_a_field_manager(dynamic: DynamicClient, team: str) -> None:
    with pytest.raises(UnprocessibleEntityError):
        apply_config_map(dynamic, {"a": "1"}, manager=None)


def test_server_side_apply_accepts_a_yaml_body(sandbox: KubeSandbox, team: str) -> None:
    manifest = yaml.safe_dump(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}, "data": {"a": "1"}}
    )
    status, body = raw(
        sandbox,
        "PATCH",
        f"/api/v1/namespaces/{team}/configmaps/y?fieldManager=berth&force=true",
        manifest,
        {"Content-Type": APPLY},
    )
    assert (status, body["data"]) == (201, {"a": "1"})


def test_server_side_apply_of_a_body_that_is_neither_json_nor_yaml_is_400(
    sandbox: KubeSandbox, team: str
) -> None:
    status, body = raw(
        sandbox,
        "PATCH",
        f"/api/v1/namespaces/{team}/configmaps/y?fieldManager=berth&force=true",
        "data: {a: [1\n",
        {"Content-Type": APPLY},
    )
    assert status == 400 and body["message"].startswith("error decoding YAML")
