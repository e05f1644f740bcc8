"""Where the end-to-end tests run: always the Kubernetes API stand-in, and a real API server
too when `BERTH_E2E_KUBECONFIG` names a kubeconfig for one (docs/kubesandbox.md says how to
get one from the compose `k3s` profile or kind).

Both are reached the same way: from a kubeconfig, as its (admin) user for setting up and
looking, and as Berth's own ServiceAccount, holding exactly the Helm chart's RBAC, for
everything Berth does. Nothing here reads the stand-in's memory; what a test sees, it asked
the API server for.

A real cluster should be a throwaway one: the tests create namespaces of a `payments`
tenant (deleted at the end), Berth's ServiceAccount and RBAC in `BERTH_NAMESPACE`, the
platform namespaces (argocd, kargo, ingress-nginx) and, where absent, the upstream Argo CD,
Kargo and Flux CRDs (left in place).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from django.conf import settings
from kubernetes import client as kube_client
from kubernetes import config as kube_config

from portal.sandbox import PLATFORM_NAMESPACES
from tests.support.authz import LiveCluster, path_of
from tests.support.cluster import SERVICE_ACCOUNT, chart_rbac, stand_in

E2E_VARIABLE = "BERTH_E2E_KUBECONFIG"
SETUP_MANAGER = "berth-e2e"
TARGETS = ("stand-in", "real")


def admin_session(kubeconfig: Path) -> tuple[str, requests.Session, str]:
    """(API URL, a session as the kubeconfig's user, the CA's PEM) — certificates, tokens
    and exec plugins resolved by the official client's kubeconfig loader."""
    configuration = kube_client.Configuration()
    kube_config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    if configuration.refresh_api_key_hook is not None:
        configuration.refresh_api_key_hook(configuration)
    session = requests.Session()
    session.trust_env = False  # the kubeconfig's CA, not REQUESTS_CA_BUNDLE's
    ca_pem = ""
    if configuration.ssl_ca_cert:
        session.verify = configuration.ssl_ca_cert
        ca_pem = Path(configuration.ssl_ca_cert).read_text()
    else:
        session.verify = bool(configuration.verify_ssl)
    if configuration.cert_file:
        session.cert = (configuration.cert_file, configuration.key_file)
    for setting in configuration.auth_settings().values():  # a bearer token, if any
        if setting["in"] == "header" and setting["value"]:
            session.headers[setting["key"]] = setting["value"]
    return configuration.host.rstrip("/"), session, ca_pem


class Target(LiveCluster):
    """An API server reached through a kubeconfig (see LiveCluster for can_i/attempt)."""

    def __init__(self, name: str, kubeconfig: Path) -> None:
        self.name = name
        self.url, self.session, self.ca_pem = admin_session(kubeconfig)
        self.created_namespaces: set[str] = set()

    @property
    def is_real(self) -> bool:
        return self.name == "real"

    # -- as the admin ---------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: str = "",
        content_type: str = "application/json",
    ) -> requests.Response:
        data = (
            None
            if body is None
            else (
                yaml.safe_dump(body)
                if content_type.endswith("yaml")
                else requests.models.complexjson.dumps(body)
            )
        )
        return self.session.request(
            method,
            f"{self.url}{path}{query}",
            data=data,
            headers={"Content-Type": content_type},
            timeout=30,
        )

    def read(self, obj_or_kind: dict) -> dict | None:
        """The live object at the path of `obj_or_kind` (apiVersion, kind, metadata), or None."""
        answer = self.call("GET", path_of(obj_or_kind))
        if answer.status_code == 404:
            return None
        answer.raise_for_status()
        return answer.json()

    def write(self, obj: dict, *, refused_for: float = 0) -> dict:
        """Replace a live object as the admin (someone changing things behind Berth's back),
        trying again for `refused_for` seconds while admission still refuses."""
        deadline = time.monotonic() + refused_for
        while True:
            answer = self.call("PUT", path_of(obj), obj)
            if answer.status_code != 403 or time.monotonic() >= deadline:
                answer.raise_for_status()
                return answer.json()
            time.sleep(0.5)

    def apply(self, obj: dict) -> dict:
        """Server-side apply as the tests' own field manager (setting up, not Berth)."""
        answer = self.call(
            "PATCH",
            path_of(obj),
            obj,
            query=f"?fieldManager={SETUP_MANAGER}&force=true",
            content_type="application/apply-patch+yaml",
        )
        if answer.status_code >= 300:
            raise AssertionError(
                f"applying {obj['kind']}/{obj['metadata']['name']}: "
                f"{answer.status_code} {answer.text}"
            )
        return answer.json()

    def ensure_namespace(self, name: str) -> None:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if self.read(namespace) is None:
            self.apply(namespace)

    def token_for(self, namespace: str, service_account: str, seconds: int = 3600) -> str:
        """A ServiceAccount token through the TokenRequest API."""
        answer = self.call(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": seconds},
            },
        )
        answer.raise_for_status()
        return answer.json()["status"]["token"]

    def gone(self, obj: dict, *, within: float) -> bool:
        """Wait until `obj` is gone (a real namespace terminates asynchronously)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.read(obj) is None:
                return True
            time.sleep(0.5)
        return False

    # -- setting up -----------------------------------------------------------------------

    def install_crds(self) -> None:
        """The upstream CRDs the demo cluster's plans use, where the cluster lacks them."""
        from kubesandbox.testing import upstream_crds

        for directory in upstream_crds():
            for path in sorted(Path(directory).rglob("*.yaml")):
                for crd in yaml.safe_load_all(path.read_text()):
                    if crd and crd.get("kind") == "CustomResourceDefinition":
                        self._install_crd(crd)

    def _install_crd(self, crd: dict) -> None:
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
        if self.call("GET", path).status_code == 200:
            return
        answer = self.call(
            "PATCH",
            path,
            crd,
            query=f"?fieldManager={SETUP_MANAGER}&force=true",
            content_type="application/apply-patch+yaml",
        )
        answer.raise_for_status()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            conditions = self.call("GET", path).json().get("status", {}).get("conditions", [])
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return
            time.sleep(0.5)
        raise AssertionError(f"CRD {crd['metadata']['name']} never became Established")

    def sign_in_berth(self) -> str:
        """Berth's ServiceAccount with the chart's RBAC; returns a token for it."""
        namespace = settings.BERTH_NAMESPACE
        self.ensure_namespace(namespace)
        for obj in chart_rbac(namespace):
            self.apply(obj)
        return self.token_for(namespace, SERVICE_ACCOUNT, seconds=86400)

    def forget_tenant(self, tenant: str) -> None:
        """Delete the tenant's namespaces the tests made (a real cluster keeps them)."""
        answer = self.call(
            "GET", "/api/v1/namespaces", query=f"?labelSelector=berth.dev/tenant%3D{tenant}"
        )
        answer.raise_for_status()
        for item in answer.json()["items"]:
            self.call("DELETE", f"/api/v1/namespaces/{item['metadata']['name']}")


@contextmanager
def target(name: str, workdir: Path) -> Iterator[Target]:
    if name == "stand-in":
        # Like a real server: no credentials, no rights (system:anonymous).
        with stand_in(tls=True, anonymous_user=None, termination_seconds=0.5) as sandbox:
            kubeconfig = workdir / "stand-in.kubeconfig"
            kubeconfig.write_text(yaml.safe_dump(sandbox.kubeconfig()))
            yield Target(name, kubeconfig)
        return
    configured = os.environ.get(E2E_VARIABLE)
    if not configured:
        pytest.skip(
            f"no real cluster: set {E2E_VARIABLE} to a kubeconfig of a throwaway "
            "cluster to run these tests against it too (docs/kubesandbox.md)"
        )
    real = Target(name, Path(configured))
    real.install_crds()
    for namespace in PLATFORM_NAMESPACES:
        real.ensure_namespace(namespace)
    try:
        yield real
    finally:
        real.forget_tenant("payments")
