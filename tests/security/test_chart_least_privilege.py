"""Berth's identity on its own cluster may do what provisioning needs and no more, where RBAC
alone cannot say it: RBAC cannot select by label, so the chart's ClusterRole would let Berth
delete any namespace, bind a role to itself in kube-system, delete Argo CD's `default`
AppProject or anyone's Kustomization and Kargo Project, and its Role in Argo CD's namespace
would let it rewrite or delete every Secret there (Argo CD's admin credentials, its cluster
Secrets).

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
from kubesandbox.testing import upstream_crds
from provisioning.plan import (
    ARGOCD,
    GITOPS_SOURCES_CONFIG,
    ClusterSpec,
    PlanInput,
    RepoCredential,
    TenantSpec,
    render,
)
from tests.project.test_helm_chart import a_plan_input_with_every_kind
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


@pytest.fixture
def cluster(chart: list[dict[str, Any]]) -> Iterator[Cluster]:
    with KubeSandbox(
        token="admin-token",
        crds=upstream_crds(),
        namespaces=(*DEFAULT_NAMESPACES, RELEASE_NAMESPACE, ARGOCD_NAMESPACE, FLUX_NAMESPACE),
    ) as sandbox:
        live = Cluster(sandbox)
        # What `helm install -n berth` makes of Berth's identity, through the API as its admin.
        for obj in sorted(
            (o for o in chart if o["kind"] in BERTH_KINDS),
            key=lambda o: o["kind"].startswith("ValidatingAdmissionPolicy"),
        ):
            meta = obj["metadata"]
            if obj["kind"] in {"ServiceAccount", "Role", "RoleBinding"}:
                obj = {**obj, "metadata": {"namespace": RELEASE_NAMESPACE, **meta}}
            live.as_admin(obj)
        live.berth = Cluster._session(sandbox.service_account_token(RELEASE_NAMESPACE, "berth"))
        yield live


def namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def secret(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": ARGOCD_NAMESPACE, "labels": labels},
        "data": {"url": "aHR0cHM6Ly9naXQuZXhhbXBsZS5jb20vcGF5bWVudHMuZ2l0"},
    }


def refused(answer: requests.Response, *words: str) -> bool:
    """Refused by one of the chart's admission policies (not by RBAC), saying `words`."""
    message = answer.json().get("message", "")
    assert answer.status_code == 403, (answer.status_code, message)
    assert "ValidatingAdmissionPolicy 'berth-own-" in message, message
    return all(word in message for word in words)


def test_berth_cannot_delete_a_namespace_it_did_not_make(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/team-legacy")

    assert refused(
        answer,
        "Berth deletes only the namespaces it made",
        "app.kubernetes.io/managed-by: berth",
        "team-legacy is not one of them",
    )
    assert (
        cluster.call(cluster.admin, "GET", "/api/v1/namespaces/team-legacy").json()["status"][
            "phase"
        ]
        == "Active"
    )


def test_berth_deletes_a_namespace_it_labelled_as_its_own(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-shop-dev", BERTHS))

    answer = cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/payments-shop-dev")

    assert answer.status_code == 200, answer.text
    assert answer.json()["status"]["phase"] == "Terminating"


def test_berth_cannot_label_a_namespace_as_its_own_to_delete_it(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.apply(cluster.berth, namespace("team-legacy", BERTHS))

    assert refused(answer, "may not label a namespace it did not make as its own")
    assert (
        cluster.call(cluster.berth, "DELETE", "/api/v1/namespaces/team-legacy").status_code == 403
    )


def test_berth_still_applies_its_own_namespace_which_it_does_not_own(cluster: Cluster) -> None:
    """ "Install guardrails" applies Berth's namespace labelled part-of, not managed-by."""
    answer = cluster.apply(
        cluster.berth, namespace(RELEASE_NAMESPACE, {"app.kubernetes.io/part-of": "berth"})
    )

    assert answer.status_code == 200, answer.text


def test_the_namespace_policy_is_berths_alone(cluster: Cluster) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.call(cluster.admin, "DELETE", "/api/v1/namespaces/team-legacy")

    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
@pytest.mark.parametrize(
    "labels",
    [
        {"app.kubernetes.io/part-of": "argocd"},  # argocd-secret: its admin password, its keys
        {"argocd.argoproj.io/secret-type": "cluster"},  # a cluster Argo CD deploys to
        {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"},  # Berth's, but not a repository
    ],
    ids=["argo-cds-own", "a-cluster-secret", "berths-non-repository"],
)
def test_berth_cannot_change_or_delete_a_secret_in_argo_cds_namespace_that_is_not_its_own(
    cluster: Cluster, method: str, labels: dict[str, str]
) -> None:
    cluster.as_admin(secret("argocd-secret", labels))
    path = f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/argocd-secret"

    if method == "PATCH":
        answer = cluster.call(
            cluster.berth,
            "PATCH",
            path,
            {"data": {"admin.password": "eA=="}},
            content_type="application/merge-patch+json",
        )
    else:
        answer = cluster.call(cluster.berth, "DELETE", path)

    assert refused(
        answer,
        "only its own repository Secrets in Argo CD's namespace",
        "argocd-secret is not one of them",
    )
    kept = cluster.call(cluster.admin, "GET", path).json()
    assert kept["metadata"]["labels"] == labels and "admin.password" not in kept["data"]


def test_berth_changes_and_deletes_its_own_repository_secret(cluster: Cluster) -> None:
    cluster.as_admin(secret("berth-repo-payments", REPOSITORY))
    path = f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/berth-repo-payments"

    patched = cluster.apply(cluster.berth, secret("berth-repo-payments", REPOSITORY))
    deleted = cluster.call(cluster.berth, "DELETE", path)

    assert (patched.status_code, deleted.status_code) == (200, 200), (patched.text, deleted.text)
    assert cluster.call(cluster.admin, "GET", path).status_code == 404


@pytest.mark.parametrize(
    "labels",
    [
        {},
        BERTHS,  # Berth's, but not a repository Argo CD reads
        {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"},
        {"argocd.argoproj.io/secret-type": "repository"},  # a repository, but not Berth's
    ],
    ids=["unlabelled", "no-secret-type", "cluster-secret-type", "not-managed-by-berth"],
)
def test_berth_cannot_create_a_secret_in_argo_cds_namespace_but_a_repository_of_its_own(
    cluster: Cluster, labels: dict[str, str]
) -> None:
    answer = cluster.apply(cluster.berth, secret("berth-repo-payments", labels))

    assert refused(answer, "must be a tenant's repository Secret")
    assert (
        cluster.call(
            cluster.admin,
            "GET",
            f"/api/v1/namespaces/{ARGOCD_NAMESPACE}/secrets/berth-repo-payments",
        ).status_code
        == 404
    )


def test_berth_cannot_turn_its_repository_secret_into_another_kind(cluster: Cluster) -> None:
    cluster.as_admin(secret("berth-repo-payments", REPOSITORY))

    answer = cluster.apply(
        cluster.berth,
        secret("berth-repo-payments", {**BERTHS, "argocd.argoproj.io/secret-type": "cluster"}),
    )

    assert refused(answer, "must be a tenant's repository Secret")


def test_what_a_tenant_plan_puts_in_argo_cds_namespace_and_removes_passes(cluster: Cluster) -> None:
    """Berth's own provisioning under the policies: the tenant's repository Secret and
    namespace the plan applies, and the same ones its decommission deletes."""
    inputs = PlanInput(
        request_id=7,
        tenant=TenantSpec(
            slug="payments",
            name="Payments",
            groups={"owner": ("po",)},
            repo_url="https://git.example.com/payments.git",
            credential=RepoCredential(transport="https", username="bot", password="t0ken"),
        ),
        cluster=ClusterSpec(
            name="prod",
            argocd_namespace=ARGOCD_NAMESPACE,
            has_kargo=False,
            ingress_namespace="ingress",
        ),
        engine="argocd",
        tenant_engines=frozenset({ARGOCD}),
    )
    plan = render(inputs)
    wanted = [
        obj
        for obj in plan.apply
        if obj["kind"] == "Namespace"
        or (obj["kind"] == "Secret" and obj["metadata"]["namespace"] == ARGOCD_NAMESPACE)
    ]
    assert {obj["kind"] for obj in wanted} == {"Namespace", "Secret"}
    for obj in wanted:
        answer = cluster.apply(cluster.berth, obj)
        assert answer.status_code == 201, answer.text

    gone = render(
        replace(inputs, tenant_engines=frozenset(), remove_tenant_engines=frozenset({ARGOCD}))
    ).delete
    for ref in gone:
        if ref.kind in {"Namespace", "Secret"}:
            answer = cluster.call(
                cluster.berth,
                "DELETE",
                path_of(
                    {
                        "apiVersion": ref.api_version,
                        "kind": ref.kind,
                        "metadata": {"name": ref.name, "namespace": ref.namespace},
                    }
                ),
            )
            assert answer.status_code == 200, (ref, answer.text)


# -- everything else Berth writes: only in the namespaces it made ----------------------------


def role_binding(namespace: str) -> dict[str, Any]:
    """What a stolen Berth token would do: bind a role Berth may bind to Berth itself."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "berth-owners", "namespace": namespace, "labels": BERTHS},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "berth-tenant-edit",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "berth", "namespace": RELEASE_NAMESPACE}],
    }


def appproject(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": name, "namespace": ARGOCD_NAMESPACE, "labels": labels},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]},
    }


def kustomization(namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "root", "namespace": namespace, "labels": labels},
        "spec": {
            "interval": "10m0s",
            "path": "./",
            "prune": True,
            "serviceAccountName": "berth-reconciler",
            "sourceRef": {"kind": "GitRepository", "name": "payments"},
        },
    }


def kargo_project(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "kargo.akuity.io/v1alpha1",
        "kind": "Project",
        "metadata": {"name": name, "labels": labels},
    }


def repo_credentials(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": "berth-repo-credentials", "namespace": namespace, "labels": BERTHS},
        "data": {"password": "dDBrZW4="},
    }


def gone(cluster: Cluster, obj: dict[str, Any]) -> bool:
    return cluster.call(cluster.admin, "GET", path_of(obj)).status_code == 404


@pytest.mark.parametrize("where", ["kube-system", "team-legacy"])
def test_berth_cannot_bind_a_role_outside_the_namespaces_it_made(
    cluster: Cluster, where: str
) -> None:
    cluster.as_admin(namespace("team-legacy", {"team": "legacy"}))

    answer = cluster.apply(cluster.berth, role_binding(where))

    assert refused(
        answer,
        "Berth writes only in the namespaces it made",
        f"{where} is not one of them (rolebindings {where}/berth-owners)",
    )
    assert gone(cluster, role_binding(where))


def test_berth_cannot_write_its_repository_credentials_outside_its_namespaces(
    cluster: Cluster,
) -> None:
    answer = cluster.apply(cluster.berth, repo_credentials("kube-system"))

    assert refused(
        answer, "Berth writes only in the namespaces it made", "kube-system is not one of them"
    )
    assert gone(cluster, repo_credentials("kube-system"))


def test_berth_binds_roles_and_writes_credentials_in_a_namespace_it_made(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-gitops", BERTHS))

    applied = [
        cluster.apply(cluster.berth, role_binding("payments-gitops")),
        cluster.apply(cluster.berth, repo_credentials("payments-gitops")),
    ]
    # A RoleBinding whose role changed is deleted and made again (engine.apply_object).
    deleted = cluster.call(cluster.berth, "DELETE", path_of(role_binding("payments-gitops")))

    assert [answer.status_code for answer in applied] == [201, 201], [a.text for a in applied]
    assert deleted.status_code == 200, deleted.text


@pytest.mark.parametrize("method", ["DELETE", "PATCH"])
def test_berth_cannot_delete_or_adopt_argo_cds_default_appproject(
    cluster: Cluster, method: str
) -> None:
    cluster.as_admin(appproject("default", {}))
    project = appproject("default", BERTHS)

    if method == "DELETE":
        answer = cluster.call(cluster.berth, "DELETE", path_of(project))
    else:  # labelling it as Berth's would make it deletable
        answer = cluster.apply(cluster.berth, project)

    assert refused(
        answer,
        "In Argo CD's namespace Berth writes only its tenants' AppProjects",
        f"appprojects {ARGOCD_NAMESPACE}/default is not one of them",
    )
    kept = cluster.call(cluster.admin, "GET", path_of(project)).json()
    assert kept["metadata"].get("labels", {}) == {}


def test_berth_cannot_put_an_application_in_argo_cds_namespace(cluster: Cluster) -> None:
    """Its roots live in <tenant>-apps; one in Argo CD's namespace could use any AppProject."""
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "root", "namespace": ARGOCD_NAMESPACE, "labels": BERTHS},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://git.example.com/x.git", "path": "."},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "kube-system"},
        },
    }

    answer = cluster.apply(cluster.berth, application)

    assert refused(answer, "applications argocd/root is not one of them")


def test_berth_writes_and_deletes_its_tenants_appproject(cluster: Cluster) -> None:
    made = cluster.apply(cluster.berth, appproject("payments", BERTHS))
    deleted = cluster.call(cluster.berth, "DELETE", path_of(appproject("payments", BERTHS)))

    assert (made.status_code, deleted.status_code) == (201, 200), (made.text, deleted.text)


def test_berth_cannot_delete_a_kustomization_it_did_not_make(cluster: Cluster) -> None:
    theirs = kustomization(FLUX_NAMESPACE, {"kustomize.toolkit.fluxcd.io/name": "flux-system"})
    cluster.as_admin(theirs)

    answer = cluster.call(cluster.berth, "DELETE", path_of(theirs))

    assert refused(
        answer,
        "Berth writes only in the namespaces it made",
        f"{FLUX_NAMESPACE} is not one of them (kustomizations {FLUX_NAMESPACE}/root)",
    )
    assert not gone(cluster, theirs)


def test_berth_deletes_the_kustomization_in_its_tenants_gitops_namespace(cluster: Cluster) -> None:
    cluster.as_admin(namespace("payments-gitops", BERTHS))
    # The Flux tenancy policy's parameter, as the plan puts it there.
    cluster.as_admin(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": GITOPS_SOURCES_CONFIG,
                "namespace": "payments-gitops",
                "labels": BERTHS,
            },
            "data": {},
        }
    )
    cluster.as_admin(kustomization("payments-gitops", BERTHS))

    answer = cluster.call(
        cluster.berth, "DELETE", path_of(kustomization("payments-gitops", BERTHS))
    )

    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("method", ["DELETE", "PATCH"])
def test_berth_cannot_delete_or_adopt_a_kargo_project_it_did_not_make(
    cluster: Cluster, method: str
) -> None:
    cluster.as_admin(kargo_project("platform", {"team": "platform"}))

    if method == "DELETE":
        answer = cluster.call(cluster.berth, "DELETE", path_of(kargo_project("platform", {})))
    else:
        answer = cluster.apply(cluster.berth, kargo_project("platform", BERTHS))

    assert refused(
        answer,
        "Berth writes only the Kargo Projects it made",
        "projects platform is not one of them",
    )
    assert not gone(cluster, kargo_project("platform", {}))


def test_berth_makes_and_deletes_its_own_kargo_project(cluster: Cluster) -> None:
    made = cluster.apply(cluster.berth, kargo_project("payments-shop-kargo", BERTHS))
    deleted = cluster.call(
        cluster.berth, "DELETE", path_of(kargo_project("payments-shop-kargo", BERTHS))
    )

    assert (made.status_code, deleted.status_code) == (201, 200), (made.text, deleted.text)


def test_every_object_of_a_plan_is_applied_and_deleted_under_the_policies(cluster: Cluster) -> None:
    """Every kind Berth applies (a project on Argo CD + Kargo, a namespace on Flux, the
    tenant's objects of both engines) and every one its decommission deletes, as Berth."""
    plan = render(a_plan_input_with_every_kind())
    for obj in plan.apply:
        answer = cluster.apply(cluster.berth, obj)
        assert answer.status_code == 201, (obj["kind"], obj["metadata"], answer.text)
    # What a tenant leaving deletes that this plan did not make: made by an earlier one.
    for obj in (
        namespace("payments-old-dev", BERTHS),
        namespace("payments-old-kargo", BERTHS),
        kargo_project("payments-old-kargo", BERTHS),
    ):
        cluster.as_admin(obj)

    for ref in plan.delete:
        answer = cluster.call(
            cluster.berth,
            "DELETE",
            path_of(
                {
                    "apiVersion": ref.api_version,
                    "kind": ref.kind,
                    "metadata": {"name": ref.name, "namespace": ref.namespace},
                }
            ),
        )
        assert answer.status_code == 200, (ref, answer.text)


def test_the_policies_are_on_by_default_go_with_berths_rbac_and_can_be_left_out(
    chart: list[dict[str, Any]],
) -> None:
    policies = set(check_chart.LEAST_PRIVILEGE_POLICIES)

    def shipped(rendered: list[dict[str, Any]]) -> set[tuple[str, str]]:
        return {
            (obj["kind"], obj["metadata"]["name"])
            for obj in rendered
            if obj["metadata"]["name"] in policies
        }

    both = {(kind, name) for name in policies for kind in check_chart.ADMISSION_KINDS}
    assert shipped(chart) == both
    # Every provisioning test signs Berth in with these (tests/support/cluster.py, `make run`).
    assert shipped(check_chart.berth_rbac("berth-system")) == both
    values = check_chart.load_values(check_chart.CHART / "ci" / "default-values.yaml")
    assert (
        shipped(check_chart.render({**values, "admission": {"berthLeastPrivilege": False}}))
        == set()
    )
    # Without the Role in Argo CD's namespace there are no Secrets there to fence.
    assert shipped(check_chart.render({**values, "rbac": {"argocdRepositorySecrets": False}})) == {
        (kind, name)
        for kind in check_chart.ADMISSION_KINDS
        for name in ("berth-own-namespaces", "berth-own-objects")
    }
