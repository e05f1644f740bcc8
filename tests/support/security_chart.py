"""What the tests of the chart's least-privilege policies share
(tests/security/test_chart_least_privilege_*.py; their fixtures `chart` and `cluster` are in
tests/security/conftest.py): the chart's own checker (deploy/helm/check_chart.py), a
Kubernetes API stand-in with the chart installed, signed in as its admin and as Berth, and
the objects Berth would write there."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import requests

from kubesandbox import KubeSandbox
from provisioning.plan import ObjectRef
from tests.support.authz import path_of

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_chart", ROOT / "deploy/helm/check_chart.py")
check_chart = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_chart)

RELEASE_NAMESPACE = check_chart.NAMESPACE
ARGOCD_NAMESPACE = "argocd"
FLUX_NAMESPACE = "flux-system"
BERTHS = {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": "payments"}
REPOSITORY = {**BERTHS, "argocd.argoproj.io/secret-type": "repository"}
BERTH_KINDS = {
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}


class Cluster:
    """The stand-in with the chart installed; `admin` and `berth` are signed-in sessions."""

    def __init__(self, sandbox: KubeSandbox) -> None:
        self.url = sandbox.url
        self.admin = self._session(sandbox.token)
        self.berth: requests.Session | None = None

    @staticmethod
    def _session(token: str) -> requests.Session:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        session.trust_env = False  # never through a proxy from the environment
        return session

    def call(
        self,
        session: requests.Session,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
    ) -> requests.Response:
        return session.request(
            method,
            f"{self.url}{path}",
            json=body,
            params=query,
            headers={"Content-Type": content_type},
            timeout=30,
        )

    def apply(self, session: requests.Session, obj: dict[str, Any]) -> requests.Response:
        """Server-side apply, as Berth's cluster client and `kubectl apply --server-side` do."""
        return self.call(
            session,
            "PATCH",
            path_of(obj),
            obj,
            content_type="application/apply-patch+yaml",
            query={"fieldManager": "berth", "force": "true"},
        )

    def as_admin(self, obj: dict[str, Any]) -> None:
        answer = self.apply(self.admin, obj)
        assert answer.status_code in (200, 201), answer.text


def path_of_ref(ref: ObjectRef) -> str:
    """The API path of an object a plan deletes."""
    return path_of(
        {
            "apiVersion": ref.api_version,
            "kind": ref.kind,
            "metadata": {"name": ref.name, "namespace": ref.namespace},
        }
    )


def namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def refused(answer: requests.Response, *words: str) -> bool:
    """Refused by one of the chart's admission policies (not by RBAC), saying `words`."""
    message = answer.json().get("message", "")
    assert answer.status_code == 403, (answer.status_code, message)
    assert "ValidatingAdmissionPolicy 'berth-own-" in message, message
    return all(word in message for word in words)


def kargo_project(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "kargo.akuity.io/v1alpha1",
        "kind": "Project",
        "metadata": {"name": name, "labels": labels},
    }


def gone(cluster: Cluster, obj: dict[str, Any]) -> bool:
    return cluster.call(cluster.admin, "GET", path_of(obj)).status_code == 404
