"""The Kubernetes stand-in, exercised over real HTTP with the official client."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ConflictError, UnprocessibleEntityError

from kubesandbox import KubeSandbox

from .conftest import configuration, raw

REPO_ROOT = Path(__file__).resolve().parents[2]
APPLY = "application/apply-patch+yaml"
ARGO = ("argoproj.io", "v1alpha1")
KARGO = ("kargo.akuity.io", "v1alpha1")


def meta(name: str, **kwargs: object) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name, **kwargs)


def config_map(name: str, data: dict | None = None, **kwargs: object) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=meta(name, **kwargs), data=data or {"k": "v"})


def status_of(error: pytest.ExceptionInfo[ApiException]) -> dict:
    """The Status object the server sent with an error."""
    return json.loads(error.value.body)


def application(name: str, namespace: str = "team-a", **spec: object) -> dict:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "project": "default",
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            **spec,
        },
    }


# -- discovery ----------------------------------------------------------------------------


def test_version_answers_with_and_without_trailing_slash(
    sandbox: KubeSandbox, api_client: client.ApiClient
) -> None:
    assert client.VersionApi(api_client).get_code().git_version.startswith("v1.")
    status, body = raw(sandbox, "GET", "/version/")
    assert status == 200
    assert body["major"] == "1"


def test_core_discovery_reports_scope_kind_and_verbs(core: client.CoreV1Api) -> None:
    found = {r.name: r for r in core.get_api_resources().resources}
    assert found["namespaces"].namespaced is False
    assert found["namespaces"].kind == "Namespace"
    assert found["configmaps"].namespaced is True
    assert {"create", "get", "list", "patch", "update", "delete"} <= set(found["secrets"].verbs)
    assert "namespaces/status" in found
    assert {"serviceaccounts", "services", "resourcequotas", "limitranges"} <= set(found)


@pytest.mark.crds
def test_api_group_list_names_every_served_group(api_client: client.ApiClient) -> None:
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    assert set(groups) == {
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "policy",
        "autoscaling",
        "coordination.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        # from the upstream CRDs the sandbox was started with
        "argoproj.io",
        "kargo.akuity.io",
        "source.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
    }
    assert groups["kargo.akuity.io"].preferred_version.group_version == "kargo.akuity.io/v1alpha1"


def test_group_discovery_marks_admission_policies_cluster_scoped(
    api_client: client.ApiClient,
) -> None:
    listing = client.AdmissionregistrationV1Api(api_client).get_api_resources()
    scopes = {r.name: r.namespaced for r in listing.resources if "/" not in r.name}
    assert scopes == {
        "validatingadmissionpolicies": False,
        "validatingadmissionpolicybindings": False,
        "validatingwebhookconfigurations": False,
        "mutatingwebhookconfigurations": False,
    }


@pytest.mark.crds
def test_dynamic_client_discovers_custom_resources(dynamic: DynamicClient, team: str) -> None:
    project = dynamic.resources.get(api_version="kargo.akuity.io/v1alpha1", kind="Project")
    stage = dynamic.resources.get(api_version="kargo.akuity.io/v1alpha1", kind="Stage")
    assert (project.namespaced, stage.namespaced) == (False, True)
    for api_version, kind in [
        ("argoproj.io/v1alpha1", "AppProject"),
        ("source.toolkit.fluxcd.io/v1", "GitRepository"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
    ]:
        resource = dynamic.resources.get(api_version=api_version, kind=kind)
        assert resource.get(namespace=team).kind == f"{kind}List"


def test_unknown_resource_type_is_404(sandbox: KubeSandbox) -> None:
    for path in ["/api/v1/namespaces/default/widgets", "/apis/example.com/v1", "/nothing"]:
        status, body = raw(sandbox, "GET", path)
        assert (status, body["kind"], body["reason"]) == (404, "Status", "NotFound"), path


def test_health_endpoints_answer_ok(sandbox: KubeSandbox) -> None:
    assert raw(sandbox, "GET", "/healthz") == (200, "ok")


# -- create, read, list -------------------------------------------------------------------


def test_create_fills_in_server_metadata(core: client.CoreV1Api, team: str) -> None:
    created = core.create_namespaced_config_map(team, config_map("settings"))
    assert created.metadata.uid
    assert created.metadata.creation_timestamp is not None
    assert created.metadata.resource_version.isdigit()
    assert created.metadata.generation == 1
    assert created.metadata.namespace == team
    assert core.read_namespaced_config_map("settings", team).metadata.uid == created.metadata.uid


def test_resource_version_grows_monotonically_across_objects(
    core: client.CoreV1Api, team: str
) -> None:
    versions = [
        int(core.create_namespaced_config_map(team, config_map(f"c{i}")).metadata.resource_version)
        for i in range(3)
    ]
    assert versions == sorted(versions)
    assert len(set(versions)) == 3


def test_generate_name_gets_a_random_suffix(core: client.CoreV1Api, team: str) -> None:
    created = core.create_namespaced_config_map(
        team, client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="run-"))
    )
    assert created.metadata.name.startswith("run-")
    assert len(created.metadata.name) > len("run-")


def test_create_conflict_is_409(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("settings"))
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map(team, config_map("settings"))
    assert error.value.status == 409
    assert status_of(error)["reason"] == "AlreadyExists"


def test_get_of_missing_object_is_404_with_details(core: client.CoreV1Api, team: str) -> None:
    with pytest.raises(ApiException) as error:
        core.read_namespaced_config_map("ghost", team)
    assert error.value.status == 404
    body = status_of(error)
    assert body["reason"] == "NotFound"
    assert body["message"] == 'configmaps "ghost" not found'
    assert body["details"] == {"name": "ghost", "kind": "configmaps"}


@pytest.mark.crds
def test_list_carries_kind_api_version_and_resource_version(
    sandbox: KubeSandbox, custom: client.CustomObjectsApi, team: str
) -> None:
    custom.create_namespaced_custom_object(*ARGO, team, "applications", application("web"))
    listing = custom.list_namespaced_custom_object(*ARGO, team, "applications")
    assert listing["kind"] == "ApplicationList"
    assert listing["apiVersion"] == "argoproj.io/v1alpha1"
    assert listing["metadata"]["resourceVersion"].isdigit()
    assert [(i["kind"], i["apiVersion"]) for i in listing["items"]] == [
        ("Application", "argoproj.io/v1alpha1")
    ]
    status, body = raw(sandbox, "GET", "/api/v1/namespaces")
    assert (status, body["kind"], body["items"][0]["kind"]) == (200, "NamespaceList", "Namespace")


def test_list_across_all_namespaces(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("one"))
    core.create_namespaced_config_map("default", config_map("two"))
    everywhere = core.list_config_map_for_all_namespaces()
    assert {(c.metadata.namespace, c.metadata.name) for c in everywhere.items} == {
        (team, "one"),
        ("default", "two"),
    }
    assert [c.metadata.name for c in core.list_namespaced_config_map(team).items] == ["one"]


def test_list_pages_with_limit_and_continue(core: client.CoreV1Api, team: str) -> None:
    for i in range(5):
        core.create_namespaced_config_map(team, config_map(f"c{i}"))
    first = core.list_namespaced_config_map(team, limit=2)
    assert [c.metadata.name for c in first.items] == ["c0", "c1"]
    assert first.metadata.remaining_item_count == 3
    rest = core.list_namespaced_config_map(team, limit=10, _continue=first.metadata._continue)
    assert [c.metadata.name for c in rest.items] == ["c2", "c3", "c4"]
    assert rest.metadata._continue is None


# -- label and field selectors ------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", {"web-front", "web-back"}),
        ("app==web", {"web-front", "web-back"}),
        ("app!=web", {"db", "bare"}),
        ("tier in (front, back)", {"web-front", "web-back"}),
        ("tier notin (front)", {"web-back", "db", "bare"}),
        ("app", {"web-front", "web-back", "db"}),
        ("!app", {"bare"}),
        ("app=web,tier=front", {"web-front"}),
        ("app in (web,db),!tier", {"db"}),
    ],
)
def test_label_selector_filters_list(
    core: client.CoreV1Api, team: str, selector: str, expected: set[str]
) -> None:
    labels = {
        "web-front": {"app": "web", "tier": "front"},
        "web-back": {"app": "web", "tier": "back"},
        "db": {"app": "db"},
        "bare": None,
    }
    for name, label_set in labels.items():
        core.create_namespaced_config_map(team, config_map(name, labels=label_set))
    found = core.list_namespaced_config_map(team, label_selector=selector).items
    assert {c.metadata.name for c in found} == expected


def test_malformed_label_selector_is_400(core: client.CoreV1Api, team: str) -> None:
    with pytest.raises(ApiException) as error:
        core.list_namespaced_config_map(team, label_selector="app in web")
    assert error.value.status == 400


def test_field_selector_filters_by_name(core: client.CoreV1Api, team: str) -> None:
    for name in ("one", "two"):
        core.create_namespaced_config_map(team, config_map(name))
    found = core.list_namespaced_config_map(team, field_selector="metadata.name=two").items
    assert [c.metadata.name for c in found] == ["two"]
    others = core.list_namespaced_config_map(team, field_selector="metadata.name!=two").items
    assert [c.metadata.name for c in others] == ["one"]
    with pytest.raises(ApiException) as error:
        core.list_namespaced_config_map(team, field_selector="spec.nodeName=x")
    assert error.value.status == 400


# -- replace and delete -------------------------------------------------------------------


def test_replace_updates_the_object_and_its_resource_version(
    core: client.CoreV1Api, team: str
) -> None:
    created = core.create_namespaced_config_map(team, config_map("settings", {"a": "1"}))
    created.data = {"b": "2"}
    replaced = core.replace_namespaced_config_map("settings", team, created)
    assert replaced.data == {"b": "2"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    assert replaced.metadata.uid == created.metadata.uid


def test_stale_resource_version_on_replace_is_409(core: client.CoreV1Api, team: str) -> None:
    stale = core.create_namespaced_config_map(team, config_map("settings"))
    fresh = core.read_namespaced_config_map("settings", team)
    fresh.data = {"first": "writer"}
    core.replace_namespaced_config_map("settings", team, fresh)
    stale.data = {"second": "writer"}
    with pytest.raises(ApiException) as error:
        core.replace_namespaced_config_map("settings", team, stale)
    assert error.value.status == 409
    assert status_of(error)["reason"] == "Conflict"
    assert core.read_namespaced_config_map("settings", team).data == {"first": "writer"}


def test_name_mismatch_between_url_and_body_is_400(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("settings"))
    with pytest.raises(ApiException) as error:
        core.replace_namespaced_config_map("settings", team, config_map("other"))
    assert error.value.status == 400


@pytest.mark.crds
def test_delete_answers_like_the_real_server(
    core: client.CoreV1Api, custom: client.CustomObjectsApi, team: str
) -> None:
    created = core.create_namespaced_config_map(team, config_map("settings"))
    answer = core.delete_namespaced_config_map("settings", team)
    assert answer["kind"] == "Status"
    assert answer["status"] == "Success"
    assert answer["details"]["uid"] == created.metadata.uid
    custom.create_namespaced_custom_object(*ARGO, team, "applications", application("web"))
    deleted = custom.delete_namespaced_custom_object(*ARGO, team, "applications", "web")
    assert (deleted["kind"], deleted["metadata"]["name"]) == ("Application", "web")
    with pytest.raises(ApiException) as error:
        core.delete_namespaced_config_map("settings", team)
    assert error.value.status == 404


def test_delete_collection_honours_the_label_selector(core: client.CoreV1Api, team: str) -> None:
    core.create_namespaced_config_map(team, config_map("drop", labels={"gone": "yes"}))
    core.create_namespaced_config_map(team, config_map("keep"))
    core.delete_collection_namespaced_config_map(team, label_selector="gone=yes")
    assert [c.metadata.name for c in core.list_namespaced_config_map(team).items] == ["keep"]


def test_dry_run_create_stores_nothing(core: client.CoreV1Api, team: str) -> None:
    answer = core.create_namespaced_config_map(team, config_map("settings"), dry_run="All")
    assert answer.metadata.name == "settings"
    assert core.list_namespaced_config_map(team).items == []


# -- patch --------------------------------------------------------------------------------


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


# -- server-side apply --------------------------------------------------------------------


def _apply_config_map(
    dynamic: DynamicClient, data: dict, manager: str = "berth", **kwargs: object
) -> object:
    resource = dynamic.resources.get(api_version="v1", kind="ConfigMap")
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "team-a", "labels": {"owner": manager}},
        "data": data,
    }
    return resource.server_side_apply(body=body, field_manager=manager, **kwargs)


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
    applied = _apply_config_map(dynamic, {"a": "1"})
    assert applied.data.to_dict() == {"mine": "kept", "a": "1"}
    managers = {(m.manager, m.operation) for m in applied.metadata.managedFields}
    assert managers == {("OpenAPI-Generator", "Update"), ("berth", "Apply")}


def test_reapplying_identical_object_keeps_resource_version(
    dynamic: DynamicClient, team: str
) -> None:
    first = _apply_config_map(dynamic, {"a": "1"})
    again = _apply_config_map(dynamic, {"a": "1"})
    assert again.metadata.resourceVersion == first.metadata.resourceVersion
    changed = _apply_config_map(dynamic, {"a": "2"})
    assert int(changed.metadata.resourceVersion) > int(first.metadata.resourceVersion)


def test_server_side_apply_prunes_fields_the_manager_stopped_applying(
    dynamic: DynamicClient, team: str
) -> None:
    _apply_config_map(dynamic, {"a": "1", "b": "2"})
    pruned = _apply_config_map(dynamic, {"a": "1"})
    assert pruned.data.to_dict() == {"a": "1"}


def test_server_side_apply_conflict_is_409_unless_forced(dynamic: DynamicClient, team: str) -> None:
    _apply_config_map(dynamic, {"a": "1"}, manager="berth")
    with pytest.raises(ConflictError) as error:
        _apply_config_map(dynamic, {"a": "2"}, manager="someone-else")
    message = json.loads(error.value.body)["message"]
    assert message.startswith("Apply failed with 2 conflict(s)")  # .data.a and the owner label
    assert 'conflict with "berth": .data.a' in message
    forced = _apply_config_map(dynamic, {"a": "2"}, manager="someone-else", force_conflicts=True)
    assert forced.data.a == "2"
    # Forcing took both fields over, so berth owns nothing any more.
    assert [m.manager for m in forced.metadata.managedFields] == ["someone-else"]


def test_server_side_apply_requires_a_field_manager(dynamic: DynamicClient, team: str) -> None:
    with pytest.raises(UnprocessibleEntityError):
        _apply_config_map(dynamic, {"a": "1"}, manager=None)


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


# -- names, labels and namespaces ---------------------------------------------------------


def test_create_in_missing_namespace_is_404(core: client.CoreV1Api, dynamic: DynamicClient) -> None:
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map("nowhere", config_map("settings"))
    assert error.value.status == 404
    assert status_of(error)["message"] == 'namespaces "nowhere" not found'
    assert status_of(error)["details"] == {"name": "nowhere", "kind": "namespaces"}
    with pytest.raises(ApiException) as error:
        _apply_config_map(dynamic, {"a": "1"})  # team-a does not exist here
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


@pytest.mark.parametrize("sandbox_options", [{"termination_seconds": 0.3}])
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
    time.sleep(0.4)
    assert sandbox.get("Namespace", team) is None
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


# -- fault injection and the request log --------------------------------------------------


def test_injected_faults_answer_500_then_recover(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    sandbox.inject_faults(status=500, times=3, method="GET", path_contains="/configmaps")
    for _ in range(3):
        with pytest.raises(ApiException) as error:
            core.list_namespaced_config_map(team)
        assert error.value.status == 500
        assert status_of(error)["reason"] == "InternalError"
    assert core.list_namespaced_config_map(team).items == []
    log = [r for r in sandbox.requests() if r["path"].endswith("/configmaps")]
    assert [(r["status"], r["injected"]) for r in log] == [(500, True)] * 3 + [(200, False)]


def test_faults_only_hit_matching_method_and_path(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    sandbox.inject_faults(status=503, times=1, method="PATCH", path_contains="/configmaps/")
    core.create_namespaced_config_map(team, config_map("settings"))
    core.read_namespace(team)
    with pytest.raises(ApiException) as error:
        core.patch_namespaced_config_map("settings", team, {"data": {"a": "1"}})
    assert error.value.status == 503
    assert core.patch_namespaced_config_map("settings", team, {"data": {"a": "1"}}).data["a"]


def test_faults_requests_and_reset_are_reachable_over_http(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    status, fault = raw(sandbox, "POST", "/_sandbox/faults", {"status": 409, "method": "POST"})
    assert (status, fault["times"]) == (201, 1)
    assert raw(sandbox, "GET", "/_sandbox/faults")[1]["items"] == [fault]
    with pytest.raises(ApiException) as error:
        core.create_namespaced_config_map(team, config_map("settings"))
    assert error.value.status == 409
    _, log = raw(sandbox, "GET", "/_sandbox/requests")
    assert {"method": "POST", "status": 409, "injected": True}.items() <= log["items"][-1].items()
    assert raw(sandbox, "POST", "/_sandbox/faults", {"status": 200})[0] == 400
    assert raw(sandbox, "POST", "/_sandbox/reset")[0] == 200
    assert raw(sandbox, "GET", "/_sandbox/requests")[1]["items"] == []
    assert sandbox.get("Namespace", team) is None
    assert sandbox.get("Namespace", "default") is not None


def test_injected_delay_lets_the_client_time_out(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    sandbox.inject_delay(0.5, method="POST")
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        core.create_namespaced_config_map(team, config_map("slow"), _request_timeout=0.1)
    # The write still lands after the delay, as it can on a real, slow apiserver.
    deadline = time.monotonic() + 3
    while sandbox.get("ConfigMap", "slow", team) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox.get("ConfigMap", "slow", team) is not None


# -- auth, persistence and the Python API -------------------------------------------------


@pytest.mark.parametrize("sandbox_options", [{"token": "s3cret"}])
def test_wrong_token_is_401_and_no_token_is_the_anonymous_user(
    sandbox: KubeSandbox, core: client.CoreV1Api
) -> None:
    assert core.read_namespace("default").metadata.name == "default"  # the fixture sends it
    with (
        client.ApiClient(configuration(sandbox.url, "wrong")) as api,
        pytest.raises(ApiException) as error,
    ):
        client.CoreV1Api(api).read_namespace("default")
    assert error.value.status == 401
    with (
        client.ApiClient(configuration(sandbox.url)) as api,
        pytest.raises(ApiException) as error,
    ):
        client.CoreV1Api(api).read_namespace("default")
    assert error.value.status == 403
    assert status_of(error)["message"] == (
        'namespaces "default" is forbidden: User "system:anonymous" cannot get resource '
        '"namespaces" in API group "" in the namespace "default"'
    )
    # What a real cluster lets anyone read, the anonymous user may read here too.
    assert raw(sandbox, "GET", "/version")[0] == 200
    assert raw(sandbox, "GET", "/_sandbox/requests")[0] == 403


def test_state_file_survives_restart(tmp_path: Path) -> None:
    state = tmp_path / "cluster.json"
    with (
        KubeSandbox(state_file=state) as first,
        client.ApiClient(configuration(first.url)) as api,
    ):
        core = client.CoreV1Api(api)
        core.create_namespace(client.V1Namespace(metadata=meta("team-a")))
        before = core.create_namespaced_config_map("team-a", config_map("settings"))
    with (
        KubeSandbox(state_file=state) as second,
        client.ApiClient(configuration(second.url)) as api,
    ):
        core = client.CoreV1Api(api)
        kept = core.read_namespaced_config_map("settings", "team-a")
        assert kept.metadata.uid == before.metadata.uid
        after = core.create_namespaced_config_map("team-a", config_map("later"))
    assert int(after.metadata.resource_version) > int(before.metadata.resource_version)


@pytest.mark.crds
def test_inspection_helpers_see_what_clients_wrote(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    core.create_namespaced_config_map(team, config_map("settings"))
    sandbox.upsert(application("web"))
    assert [o["metadata"]["name"] for o in sandbox.objects("ConfigMap", team)] == ["settings"]
    assert sandbox.get("Application", "web", team, api_version="argoproj.io/v1alpha1")
    assert sandbox.get("configmaps", "missing", team) is None
    assert {o["kind"] for o in sandbox.objects(namespace=team)} == {"ConfigMap", "Application"}
    healthy = {**application("seeded"), "status": {"health": {"status": "Healthy"}}}
    assert sandbox.upsert(healthy)["status"] == {"health": {"status": "Healthy"}}


@pytest.mark.parametrize("sandbox_options", [{"token": "s3cret"}])
def test_kubeconfig_points_the_official_client_at_the_sandbox(sandbox: KubeSandbox) -> None:
    api = config.new_client_from_config_dict(sandbox.kubeconfig())
    with api:
        assert client.CoreV1Api(api).read_namespace("default").status.phase == "Active"


def test_module_runs_as_a_subprocess_and_stops_on_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesandbox",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--kubeconfig",
            str(kubeconfig),
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline().strip()
        assert first_line.startswith("listening on http://127.0.0.1:")
        url = first_line.removeprefix("listening on ")
        assert kubeconfig.stat().st_mode & 0o077 == 0  # it holds the admin's token
        written = yaml.safe_load(kubeconfig.read_text())
        assert written["clusters"][0]["cluster"]["server"] == url
        with client.ApiClient(configuration(url)) as api:  # no credentials: system:anonymous
            with pytest.raises(ApiException) as error:
                client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=meta("x")))
            assert error.value.status == 403
        with config.new_client_from_config_dict(written) as api:
            core = client.CoreV1Api(api)
            core.create_namespace(client.V1Namespace(metadata=meta("team-a")))
            assert "team-a" in {n.metadata.name for n in core.list_namespace().items}
        process.terminate()
        assert process.wait(timeout=5) == 0
    finally:
        process.kill()
        process.wait()
