"""A cluster for tests that provision: the Kubernetes API stand-in with the upstream CRDs
(Argo CD, Kargo, Flux), the platform's namespaces, and Berth signed in as its own
ServiceAccount holding exactly the RBAC the Helm chart ships (deploy/helm/berth, default
values). A permission the chart lacks fails here as it would on a real cluster; nothing is
granted to Berth that the chart does not grant.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from tenants.models import Cluster

ROOT = Path(__file__).resolve().parents[2]
SERVICE_ACCOUNT = "berth"


def _check_chart() -> Any:
    spec = importlib.util.spec_from_file_location(
        "check_chart", ROOT / "deploy/helm/check_chart.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def chart_rbac(namespace: str) -> tuple[dict[str, Any], ...]:
    """Berth's ServiceAccount and RBAC as the chart renders them into `namespace`."""
    check_chart = _check_chart()
    try:
        return tuple(check_chart.berth_rbac(namespace))
    except check_chart.HelmUnavailable as exc:  # pragma: no cover - a dev dependency
        pytest.skip(f"cannot render the Helm chart's RBAC for Berth: {exc}")


def sign_in_as_berth(sandbox: KubeSandbox, cluster: Cluster) -> str:
    """Put the chart's RBAC for Berth into the sandbox and make `cluster` use a token of
    Berth's ServiceAccount; returns the token."""
    namespace = settings.BERTH_NAMESPACE
    for obj in chart_rbac(namespace):
        sandbox.upsert(obj)
    token = sandbox.service_account_token(namespace, SERVICE_ACCOUNT, expiration_seconds=86400)
    cluster.auth_method = "token"
    cluster.credentials = token
    cluster.save(update_fields=["auth_method", "credentials"])
    return token


def berth_identity() -> str:
    return f"system:serviceaccount:{settings.BERTH_NAMESPACE}:{SERVICE_ACCOUNT}"


@contextmanager
def stand_in(**options: Any) -> Iterator[KubeSandbox]:
    """The stand-in a provisioning test runs against (sign Berth in with sign_in_as_berth
    once the cluster's row exists)."""
    options.setdefault("namespaces", (*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES))
    with KubeSandbox(crds=upstream_crds(), **options) as sandbox:
        yield sandbox


_SHARED: dict[tuple, KubeSandbox] = {}


def shared_stand_in(**options: Any) -> KubeSandbox:
    """A stand-in of these options for the whole test process (stopped when it ends), a
    fresh cluster for each test that takes it: started again if a test left it stopped,
    then reset."""
    key = tuple(sorted(options.items()))
    if key not in _SHARED:
        options.setdefault("namespaces", (*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES))
        _SHARED[key] = KubeSandbox(crds=upstream_crds(), **options)
    sandbox = _SHARED[key]
    if not sandbox.serving:
        sandbox.start()
    sandbox.reset()
    return sandbox


def stop_shared_stand_ins() -> None:
    for sandbox in _SHARED.values():
        sandbox.stop()
    _SHARED.clear()


def ca_of(sandbox: KubeSandbox) -> str:
    """The PEM of a TLS stand-in's CA, as a cluster's record keeps it."""
    assert sandbox.ca_certificate is not None, "the stand-in serves plain HTTP"
    return sandbox.ca_certificate.decode()


def seed_demo(sandbox: KubeSandbox, *, guardrails: bool = False, **options: Any) -> Cluster:
    """The demo world on this sandbox (tenants.demo.seed), Berth signed in to it.

    `guardrails`: installed by the worker's job, as `make run` does. Without, the cluster
    is marked as fenced by the platform's own admission control: most tests change Berth's
    objects by hand as the cluster's admin (drift, repair, campaigns), which Berth's
    guardrails exist to refuse. tests/provisioning/guardrails/test_before_use.py tests them in
    use."""
    from provisioning import tasks
    from tenants import demo
    from tenants.choices import GuardrailsMode

    demo.seed(sandbox_api_url=sandbox.url, **options)
    cluster = Cluster.objects.get(name="sandbox")
    sign_in_as_berth(sandbox, cluster)
    if guardrails:
        assert not tasks.install_guardrails(cluster.pk).startswith("failed")
    else:
        cluster.guardrails = GuardrailsMode.EXTERNAL
        cluster.save(update_fields=["guardrails"])
    cluster.refresh_from_db()
    return cluster


def as_admin(sandbox: KubeSandbox, method: str, path: str, body: Any = None) -> Any:
    """A call as the cluster's admin (someone else than Berth, changing things by hand)."""
    import requests

    response = requests.request(
        method,
        f"{sandbox.url}{path}",
        json=body,
        timeout=10,
        headers={"Authorization": f"Bearer {sandbox.token}"},
    )
    response.raise_for_status()
    return response.json() if response.content else None


@contextmanager
def trusting_provider(issuer: str, settings: Any) -> Iterator[KubeSandbox]:
    """The TLS stand-in trusting `issuer`'s ID tokens for kubectl's client, as the clusters'
    kube-apiserver --oidc-* flags do (user oidc:<sub>, the groups claim), the demo seeded on
    it with Berth's guardrails, and Berth's settings pointing people's kubeconfigs there."""
    import sys
    from pathlib import Path

    from kubesandbox.authn import OidcOptions
    from portal.sandbox import OIDC_USERNAME_PREFIX
    from tests.support.oidc_provider import KUBECTL_CLIENT_ID

    options = OidcOptions(
        issuer_url=issuer,
        client_id=KUBECTL_CLIENT_ID,
        username_prefix=OIDC_USERNAME_PREFIX,
        groups_claim="groups",
    )
    with stand_in(tls=True, oidc=options) as sandbox:
        seed_demo(sandbox, guardrails=True, sandbox_ca=ca_of(sandbox))
        settings.KUBE_OIDC_ISSUER_URL = issuer
        settings.KUBE_OIDC_CLIENT_ID = KUBECTL_CLIENT_ID
        settings.KUBE_OIDC_USERNAME_PREFIX = OIDC_USERNAME_PREFIX
        settings.BERTH_CLI_COMMAND = str(Path(sys.executable).parent / "berth")
        yield sandbox
