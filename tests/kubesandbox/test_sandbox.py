"""The sandbox as a whole: tokens, the state file, the Python API, the process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kubesandbox import KubeSandbox

from .conftest import (
    REPO_ROOT,
    application,
    config_map,
    configuration,
    meta,
    raw,
    status_of,
)


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


@pytest.mark.processes
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
