"""Fault and delay injection and the request log, from Python and over HTTP."""

from __future__ import annotations

import time
from collections import deque

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubesandbox import KubeSandbox

from .conftest import (
    config_map,
    raw,
    status_of,
)


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


def test_the_request_log_keeps_the_last_requests_and_counts_them_all(
    sandbox: KubeSandbox, core: client.CoreV1Api, team: str, monkeypatch
) -> None:
    monkeypatch.setattr(sandbox, "_requests", deque(maxlen=3))
    before = raw(sandbox, "GET", "/_sandbox/requests")[1]["total"]
    for _ in range(5):
        core.list_namespaced_config_map(team)
    log = raw(sandbox, "GET", "/_sandbox/requests")[1]
    assert len(log["items"]) == 3 and log["total"] == before + 5
