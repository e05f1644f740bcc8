"""The Table kube-apiserver prints for kubectl (Accept: application/json;as=Table;...): its
columns, its rows' objects as includeObject asks, and plain JSON for everyone else."""

from __future__ import annotations

from kubesandbox import KubeSandbox
from kubesandbox.tables import human_duration
from tests.kubesandbox.conftest import raw

AS_TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "default"},
    "data": {"a": "1", "b": "2"},
}


def get(sandbox: KubeSandbox, path: str, accept: str = AS_TABLE) -> dict:
    status, body = raw(sandbox, "GET", path, headers={"Accept": accept})
    assert status == 200, body
    return body


def test_a_list_is_printed_with_the_kinds_columns_and_each_rows_metadata(
    sandbox: KubeSandbox,
) -> None:
    sandbox.upsert(CONFIG_MAP)
    answer = get(sandbox, "/api/v1/namespaces/default/configmaps")
    assert (answer["kind"], answer["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [c["name"] for c in answer["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert answer["metadata"]["resourceVersion"]
    (row,) = answer["rows"]
    assert row["cells"][:2] == ["settings", 2]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == "settings"
    assert "data" not in row["object"]


def test_include_object_gives_the_whole_object_or_none(sandbox: KubeSandbox) -> None:
    sandbox.upsert(CONFIG_MAP)
    path = "/api/v1/namespaces/default/configmaps/settings"
    (row,) = get(sandbox, path + "?includeObject=Object")["rows"]
    assert row["object"]["data"] == {"a": "1", "b": "2"}
    (row,) = get(sandbox, path + "?includeObject=None")["rows"]
    assert "object" not in row


def test_plain_json_stays_plain_for_clients_that_prefer_it(sandbox: KubeSandbox) -> None:
    sandbox.upsert(CONFIG_MAP)
    path = "/api/v1/namespaces/default/configmaps"
    assert get(sandbox, path, accept="application/json")["kind"] == "ConfigMapList"
    assert get(sandbox, path, accept="application/json, " + AS_TABLE)["kind"] == ("ConfigMapList")
    beta = get(sandbox, path, accept="application/json;as=Table;v=v1beta1;g=meta.k8s.io")
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"


def test_ages_read_as_kubectl_shows_them() -> None:
    assert [
        human_duration(s)
        for s in (
            -5,
            0,
            59,
            119,
            150,
            600,
            7200,
            16200,
            30 * 3600,
            3 * 86400 + 3600,
            30 * 86400,
            3 * 365 * 86400,
        )
    ] == [
        "<invalid>",
        "0s",
        "59s",
        "119s",
        "2m30s",
        "10m",
        "120m",
        "4h30m",
        "30h",
        "3d1h",
        "30d",
        "3y",
    ]
