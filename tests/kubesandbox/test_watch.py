"""Watch as kubectl and controllers use it: event streams, resourceVersion, selectors."""

from __future__ import annotations

import json
import threading
import time

import pytest
import urllib3
from kubernetes import client, watch

from kubesandbox import KubeSandbox
from kubesandbox.watch import EventLog

from .conftest import raw


def config_map(name: str, labels: dict | None = None) -> client.V1ConfigMap:
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels), data={"k": "v"}
    )


def stream(sandbox: KubeSandbox, path: str) -> list[dict]:
    """Every event of a watch that ends by its own timeoutSeconds."""
    response = urllib3.request(
        "GET", sandbox.url + path, timeout=10, retries=False, preload_content=True
    )
    assert response.status == 200
    return [json.loads(line) for line in response.data.decode().splitlines() if line]


def test_watch_from_now_sees_changes_as_they_happen(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    listing = core.list_namespaced_config_map(team)

    def writer() -> None:
        time.sleep(0.2)
        core.create_namespaced_config_map(team, config_map("settings"))
        core.patch_namespaced_config_map("settings", team, {"data": {"k": "w"}})
        core.delete_namespaced_config_map("settings", team)

    thread = threading.Thread(target=writer)
    thread.start()
    events = []
    for event in watch.Watch().stream(
        core.list_namespaced_config_map,
        team,
        resource_version=listing.metadata.resource_version,
        timeout_seconds=2,
    ):
        events.append((event["type"], event["object"].metadata.name))
        if event["type"] == "DELETED":
            break
    thread.join()
    assert events == [("ADDED", "settings"), ("MODIFIED", "settings"), ("DELETED", "settings")]


def test_watch_without_resource_version_starts_with_the_current_objects(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    core.create_namespaced_config_map(team, config_map("one"))
    events = stream(sandbox, f"/api/v1/namespaces/{team}/configmaps?watch=1&timeoutSeconds=1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "one")]


def test_watch_honours_label_selectors_and_reports_objects_leaving_them(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    start = core.list_namespaced_config_map(team).metadata.resource_version
    core.create_namespaced_config_map(team, config_map("other"))
    core.create_namespaced_config_map(team, config_map("web", {"app": "web"}))
    core.patch_namespaced_config_map("web", team, {"metadata": {"labels": {"app": "db"}}})
    events = stream(
        sandbox,
        f"/api/v1/namespaces/{team}/configmaps?watch=true&labelSelector="
        f"app%3Dweb&resourceVersion={start}&timeoutSeconds=1",
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "web"),
        ("DELETED", "web"),
    ]


def test_watch_sends_bookmarks_when_asked(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    version = core.list_namespaced_config_map(team).metadata.resource_version
    events = stream(
        sandbox,
        f"/api/v1/namespaces/{team}/configmaps?watch=1&resourceVersion="
        f"{version}&allowWatchBookmarks=true&timeoutSeconds=2",
    )
    assert events and {e["type"] for e in events} == {"BOOKMARK"}
    assert events[0]["object"]["kind"] == "ConfigMap"
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) >= int(version)


def test_watch_from_a_version_older_than_the_history_is_410_gone(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = EventLog(size=2)
    monkeypatch.setattr(sandbox.store, "events", small)
    first = core.create_namespaced_config_map(team, config_map("a")).metadata.resource_version
    for name in ("b", "c", "d"):
        core.create_namespaced_config_map(team, config_map(name))
    events = stream(
        sandbox,
        f"/api/v1/namespaces/{team}/configmaps?watch=1&resourceVersion={first}&timeoutSeconds=1",
    )
    assert [e["type"] for e in events] == ["ERROR"]
    assert (events[0]["object"]["code"], events[0]["object"]["reason"]) == (410, "Expired")


def test_a_stale_resource_version_on_update_is_409(core: client.CoreV1Api, team: str) -> None:
    created = core.create_namespaced_config_map(team, config_map("settings"))
    core.patch_namespaced_config_map("settings", team, {"data": {"k": "new"}})
    created.data = {"k": "stale"}
    with pytest.raises(client.ApiException) as error:
        core.replace_namespaced_config_map("settings", team, created)
    assert error.value.status == 409


def test_watch_needs_the_watch_verb(sandbox: KubeSandbox, team: str) -> None:
    sandbox.add_token("viewer-token", "viewer")
    status, body = raw(
        sandbox,
        "GET",
        f"/api/v1/namespaces/{team}/configmaps?watch=1",
        headers={"Authorization": "Bearer viewer-token"},
    )
    assert status == 403
    assert 'cannot watch resource "configmaps"' in body["message"]


def test_field_selectors_know_each_kinds_field_labels(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    for name, kind in (("basic", "kubernetes.io/basic-auth"), ("plain", "Opaque")):
        core.create_namespaced_secret(
            team,
            client.V1Secret(
                metadata=client.V1ObjectMeta(name=name),
                type=kind,
                string_data={"username": "u", "password": "p"},
            ),
        )
    found = core.list_namespaced_secret(team, field_selector="type=kubernetes.io/basic-auth")
    assert [s.metadata.name for s in found.items] == ["basic"]
    status, body = raw(
        sandbox, "GET", f"/api/v1/namespaces/{team}/configmaps?fieldSelector=type%3DOpaque"
    )
    assert (status, body["message"]) == (400, "field label not supported: type")


def test_after_compaction_a_watch_from_before_is_410_and_one_from_now_goes_on(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    before = core.create_namespaced_config_map(team, config_map("a")).metadata.resource_version
    now = core.create_namespaced_config_map(team, config_map("b")).metadata.resource_version
    sandbox.store.events.compact()
    core.create_namespaced_config_map(team, config_map("c"))

    stale = stream(
        sandbox,
        f"/api/v1/namespaces/{team}/configmaps?watch=1&resourceVersion={before}&timeoutSeconds=5",
    )
    current = stream(
        sandbox,
        # The stream ends when the server's watch does: "c" is in its history already.
        f"/api/v1/namespaces/{team}/configmaps?watch=1&resourceVersion={now}&timeoutSeconds=1",
    )
    assert [(e["type"], e["object"]["code"]) for e in stale] == [("ERROR", 410)]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in current] == [("ADDED", "c")]


def test_a_restored_snapshot_has_its_objects_back_and_versions_keep_counting(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str
) -> None:
    """What a test suite's world built once relies on (tests/support/snapshots.py): the
    cluster as it was, faults gone, and watches from before it 410, as after etcd's restore."""
    core.create_namespaced_config_map(team, config_map_named("kept"))
    taken = sandbox.snapshot()
    core.delete_namespaced_config_map("kept", team)
    last = core.create_namespaced_config_map(team, config_map_named("later")).metadata
    sandbox.inject_faults(status=500, times=5)

    sandbox.restore(taken)

    assert [o["metadata"]["name"] for o in sandbox.objects("ConfigMap", team)] == ["kept"]
    after = core.create_namespaced_config_map(team, config_map_named("after")).metadata
    assert int(after.resource_version) > int(last.resource_version)
    stale = stream(
        sandbox,
        f"/api/v1/namespaces/{team}/configmaps?watch=1"
        f"&resourceVersion={last.resource_version}&timeoutSeconds=1",
    )
    assert [(e["type"], e["object"]["code"]) for e in stale] == [("ERROR", 410)]


def config_map_named(name: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name))
