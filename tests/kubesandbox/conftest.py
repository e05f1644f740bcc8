"""Fixtures: a fresh sandbox per test and official-client APIs pointed at it; the helpers
the tests share (object builders, raw HTTP, the Status of an error)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from kubesandbox import KubeSandbox
from kubesandbox.testing import upstream_crds

from .kubectl_support import Kubectl

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


def apply_config_map(
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
def kubectl(sandbox: KubeSandbox, tmp_path: Path) -> Kubectl:
    """The real kubectl with the sandbox's kubeconfig (the tests using it skip without one)."""
    return Kubectl.for_sandbox(sandbox, tmp_path)


@pytest.fixture
def team(core: client.CoreV1Api) -> str:
    """A namespace to work in."""
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a")))
    return "team-a"
