"""Berth's identity on its own cluster may do what provisioning needs and no more, where RBAC
alone cannot say it: RBAC cannot select by label, so the chart's ClusterRole would let Berth
delete any namespace and its Role in Argo CD's namespace would let it rewrite or delete
every Secret there (Argo CD's admin credentials, its cluster Secrets).

Each test installs what the chart renders (Berth's ServiceAccount, RBAC and admission
policies) into a running Kubernetes API stand-in as its admin, then signs in with a token
of Berth's ServiceAccount and makes the request Berth would make.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import requests

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from provisioning.plan import ARGOCD, ClusterSpec, PlanInput, RepoCredential, TenantSpec, render
from tests.authz import path_of

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_chart", ROOT / "deploy/helm/check_chart.py")
check_chart = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_chart)

RELEASE_NAMESPACE = check_chart.NAMESPACE
ARGOCD_NAMESPACE = "argocd"
BERTHS = {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": "payments"}
REPOSITORY = {**BERTHS, "argocd.argoproj.io/secret-type": "repository"}
BERTH_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
               "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}


@pytest.fixture(scope="module")
def chart() -> list[dict[str, Any]]:
    try:
        values = check_chart.load_values(check_chart.CHART / "ci" / "default-values.yaml")
        return check_chart.render(values)
    except check_chart.HelmUnavailable as exc:
        pytest.skip(f"cannot render the Helm chart: {exc}")


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

    def call(self, session: requests.Session, method: str, path: str,
             body: Any = None, *, content_type: str = "application/json",
             query: dict[str, str] | None = None) -> requests.Response:
        return session.request(method, f"{self.url}{path}", json=body, params=query,
                               headers={"Content-Type": content_type}, timeout=30)

    def apply(self, session: requests.Session, obj: dict[str, Any]) -> requests.Response:
        """Server-side apply, as Berth's cluster client and `kubectl apply --server-side` do."""
        return self.call(session, "PATCH", path_of(obj), obj,
                         content_type="application/apply-patch+yaml",
                         query={"fieldManager": "berth", "force": "true"})

    def as_admin(self, obj: dict[str, Any]) -> None:
        answer = self.apply(self.admin, obj)
        assert answer.status_code in (200, 201), answer.text


@pytest.fixture
def cluster(chart: list[dict[str, Any]]) -> Iterator[Cluster]:
    with KubeSandbox(token="admin-token",
                     namespaces=(*DEFAULT_NAMESPACES, RELEASE_NAMESPACE, ARGOCD_NAMESPACE)
                     ) as sandbox:
        live = Cluster(sandbox)
        # What `helm install -n berth` makes of Berth's identity, through the API as its admin.
        for obj in sorted((o for o in chart if o["kind"] in BERTH_KINDS),
                          key=lambda o: o["kind"].startswith("ValidatingAdmissionPolicy")):
            meta = obj["metadata"]
            if obj["kind"] in {"ServiceAccount", "Role", "RoleBinding"}:
                obj = {**obj, "metadata": {"namespace": RELEASE_NAMESPACE, **meta}}
            live.as_admin(obj)
        live.berth = Cluster._session(sandbox.service_account_token(RELEASE_NAMESPACE, "berth"))
        yield live


def namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def secret(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": ARGOCD_NAMESPACE, "labels": labels},
            "data": {"url": "aHR0cHM6Ly9naXQuZXhhbXBsZS5jb20vcGF5bWVudHMuZ2l0"}}


def refused(answer: requests.Response, *words: str) -> bool:
    """Refused by one of the chart's admission policies (not by RBAC), saying `words`."""
    message = answer.json().get("message", "")
    assert answer.status_code == 403, (answer.status_code, message)
    assert "ValidatingAdmissionPolicy 'berth-own-" in message, message
    return all(word in message for word in words)


def test_berth_cannot_delete_a_namespace_it_did_not_make(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/team-legacy")

    assert refused(answer, "Berth deletes only the namespaces it made",
                   "app.kubernetes.io/managed-by: berth", "team-legacy is not one of them")
    assert cluster.call(cluster.admin, "GET", "/api/v1/namespaces/team-legacy").json()[
        "status"]["phase"] == "Active"


def test_berth_deletes_a_namespace_it_labelled_as_its_own(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-shop-dev", BERTHS))

    answer = cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/payments-shop-dev")

    assert answer.status_code == 200, answer.text
    assert answer.json()["status"]["phase"] == "Terminating"


def test_berth_cannot_label_a_namespace_as_its_own_to_delete_it(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.apply(cluster.berth, namespace("team-legacy", BERTHS))

    assert refused(answer, "may not label a namespace it did not make as its own")
    assert cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/team-legacy"
                        ).status_code == 403


def test_berth_still_applies_its_own_namespace_which_it_does_not_own(cluster: Cluster) -> None:
    """"Install guardrails" applies Berth's namespace labelled part-of, not managed-by."""
    answer = cluster.apply(cluster.berth, namespace(RELEASE_NAMESPACE,
                                                    {"app.kubernetes.io/part-of": "berth"}))

    assert answer.status_code == 200, answer.text


def test_the_namespace_policy_is_berths_alone(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.call(cluster.admin, "DELETE", "/api/v1/namespaces/team-legacy")

    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
@pytest.mark.parametrize("labels", [
    {"app.kubernetes.io/part-of": "argocd"},  # argocd-secret: its admin password, its keys
    {"argocd.argoproj.io/secret-type": "cluster"},  # a cluster Argo CD deploys to
    {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"},  # Berth's, but not a repository
], ids=["argo-cds-own", "a-cluster-secret", "berths-non-repository"])
def test_berth_cannot_change_or_delete_a_secret_in_argo_cds_namespace_that_is_not_its_own(
        cluster: Cluster, method: str, labels: dict[str, str]) -> None:
    cluster.as_admin(secret("argocd-secret", labels))
    path = f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/argocd-secret"

    if method == "PATCH":
        answer = cluster.call(cluster.berth, "PATCH", path, {"data": {"admin.password": "eA=="}},
                              content_type="application/merge-patch+json")
    else:
        answer = cluster.call(cluster.berth, "DELETE", path)

    assert refused(answer, "only its own repository Secrets in Argo CD's namespace",
                   "argocd-secret is not one of them")
    kept = cluster.call(cluster.admin, "GET", path).json()
    assert kept["metadata"]["labels"] == labels and "admin.password" not in kept["data"]


def test_berth_changes_and_deletes_its_own_repository_secret(cluster: Cluster) -> None:
    cluster.as_admin(secret("berth-repo-payments", REPOSITORY))
    path = f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/berth-repo-payments"

    patched = cluster.apply(cluster.berth, secret("berth-repo-payments", REPOSITORY))
    deleted = cluster.call(cluster.berth, "DELETE", path)

    assert (patched.status_code, deleted.status_code) == (200, 200), (patched.text, deleted.text)
    assert cluster.call(cluster.admin, "GET", path).status_code == 404


@pytest.mark.parametrize("labels", [
    {},
    BERTHS,  # Berth's, but not a repository Argo CD reads
    {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"},
    {"argocd.argoproj.io/secret-type": "repository"},  # a repository, but not Berth's
], ids=["unlabelled", "no-secret-type", "cluster-secret-type", "not-managed-by-berth"])
def test_berth_cannot_create_a_secret_in_argo_cds_namespace_but_a_repository_of_its_own(
        cluster: Cluster, labels: dict[str, str]) -> None:
    answer = cluster.apply(cluster.berth, secret("berth-repo-payments", labels))

    assert refused(answer, "must be a tenant's repository Secret")
    assert cluster.call(cluster.admin, "GET", f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/"
                        "berth-repo-payments").status_code == 404


def test_berth_cannot_turn_its_repository_secret_into_another_kind(cluster: Cluster) -> None:
    cluster.as_admin(secret("berth-repo-payments", REPOSITORY))

    answer = cluster.apply(cluster.berth, secret(
        "berth-repo-payments", {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"}))

    assert refused(answer, "must be a tenant's repository Secret")


def test_what_a_tenant_plan_puts_in_argo_cds_namespace_and_removes_passes(
        cluster: Cluster) -> None:
    """Berth's own provisioning under the policies: the tenant's repository Secret and
    namespace the plan applies, and the same ones its decommission deletes."""
    inputs = PlanInput(
        request_id=7,
        tenant=TenantSpec(slug="payments", name="Payments", groups={"owner": ("po",)},
                          repo_url="https://git.example.com/payments.git",
                          credential=RepoCredential(transport="https", username="bot",
                                                    password="t0ken")),
        cluster=ClusterSpec(name="prod", argocd_namespace=ARGOCD_NAMESPACE, has_kargo=False,
                            ingress_namespace="ingress"),
        engine="argocd", tenant_engines=frozenset({ARGOCD}),
    )
    plan = render(inputs)
    wanted = [obj for obj in plan.apply if obj["kind"] == "Namespace"
              or (obj["kind"] == "Secret" and obj["metadata"]["namespace"] == ARGOCD_NAMESPACE)]
    assert {obj["kind"] for obj in wanted} == {"Namespace", "Secret"}
    for obj in wanted:
        answer = cluster.apply(cluster.berth, obj)
        assert answer.status_code == 201, answer.text

    gone = render(replace(inputs, tenant_engines=frozenset(),
                          remove_tenant_engines=frozenset({ARGOCD}))).delete
    for ref in gone:
        if ref.kind in {"Namespace", "Secret"}:
            answer = cluster.call(cluster.berth, "DELETE", path_of(
                {"apiVersion": ref.api_version, "kind": ref.kind,
                 "metadata": {"name": ref.name, "namespace": ref.namespace}}))
            assert answer.status_code == 200, (ref, answer.text)


def test_the_policies_are_on_by_default_go_with_berths_rbac_and_can_be_left_out(
        chart: list[dict[str, Any]]) -> None:
    policies = set(check_chart.LEAST_PRIVILEGE_POLICIES)

    def shipped(rendered: list[dict[str, Any]]) -> set[tuple[str, str]]:
        return {(obj["kind"], obj["metadata"]["name"]) for obj in rendered
                if obj["metadata"]["name"] in policies}

    both = {(kind, name) for name in policies for kind in check_chart.ADMISSION_KINDS}
    assert shipped(chart) == both
    # Every provisioning test signs Berth in with these (tests/cluster.py, `make run`).
    assert shipped(check_chart.berth_rbac("berth-system")) == both
    values = check_chart.load_values(check_chart.CHART / "ci" / "default-values.yaml")
    assert shipped(check_chart.render({**values, "admission": {"berthLeastPrivilege": False}})
                   ) == set()
    # Without the Role in Argo CD's namespace there is nothing there to fence.
    assert shipped(check_chart.render({**values, "rbac": {"argocdRepositorySecrets": False}})
                   ) == {(kind, "berth-own-namespaces") for kind in check_chart.ADMISSION_KINDS}
