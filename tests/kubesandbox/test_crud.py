"""Create, read, list (pages, label and field selectors), replace and delete, with the
real server's answers."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubesandbox import KubeSandbox

from .conftest import (
    ARGO,
    application,
    config_map,
    raw,
    status_of,
)


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
