"""Fixtures: a fresh sandbox per test and official-client APIs pointed at it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from kubesandbox import KubeSandbox
from kubesandbox.testing import upstream_crds


def configuration(url: str, token: str | None = None) -> client.Configuration:
    config = client.Configuration(host=url)
    config.proxy = None  # never route 127.0.0.1 through a proxy from the environment
    if token:
        config.api_key = {"BearerToken": token}
        config.api_key_prefix = {"BearerToken": "Bearer"}
    return config


def raw(
    sandbox: KubeSandbox,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """An HTTP call without the official client, for what it cannot express."""
    data = body if isinstance(body, str | bytes | None) else json.dumps(body)
    response = urllib3.request(
        method,
        sandbox.url + path,
        body=data,
        headers={"Content-Type": "application/json", **(headers or {})},
        timeout=5,
        retries=False,
    )
    is_json = response.headers.get("Content-Type", "").startswith("application/json")
    return response.status, response.json() if is_json else response.data.decode()


@pytest.fixture
def sandbox_options() -> dict:
    """Override in a test module (or parametrize indirectly) to configure the sandbox."""
    return {}


@pytest.fixture
def sandbox(sandbox_options: dict, request: pytest.FixtureRequest) -> Iterator[KubeSandbox]:
    """A running sandbox; tests marked ``crds`` get the upstream Argo CD, Kargo and Flux CRDs
    (and are skipped, with the reason, where ../shared/crds is missing)."""
    options = dict(sandbox_options)
    if request.node.get_closest_marker("crds"):
        options.setdefault("crds", upstream_crds())
    with KubeSandbox(**options) as running:
        yield running


@pytest.fixture
def api_client(sandbox: KubeSandbox) -> Iterator[client.ApiClient]:
    with client.ApiClient(configuration(sandbox.url, sandbox.token)) as api:
        yield api


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def rbac(api_client: client.ApiClient) -> client.RbacAuthorizationV1Api:
    return client.RbacAuthorizationV1Api(api_client)


@pytest.fixture
def networking(api_client: client.ApiClient) -> client.NetworkingV1Api:
    return client.NetworkingV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


@pytest.fixture
def dynamic(api_client: client.ApiClient, tmp_path: Any) -> DynamicClient:
    # A private discovery cache: the default one in /tmp is keyed by URL and ports get reused.
    return DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))


@pytest.fixture
def team(core: client.CoreV1Api) -> str:
    """A namespace to work in."""
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a")))
    return "team-a"
