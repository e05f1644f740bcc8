"""The GitOps loop, end to end: what Berth applies on a cluster reads what it writes in the
tenant's repository, as the tenant, for the tenant's whole life.

Against the Kubernetes API stand-in (Berth as its ServiceAccount with the chart's RBAC, the
upstream Argo CD, Kargo and Flux CRDs) and a git server over HTTP wanting the tenant's
token. An Argo CD project, an Argo CD + Kargo project and a Flux project are provisioned;
then each root is followed to the directory it names in a clone of the repository, and
`kubectl kustomize` builds what the engine would apply.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from provisioning.schema import validate_objects
from provisioning.tasks import install_guardrails
from tenants import services
from tenants.choices import RequestKind, RequestState
from tenants.models import Cluster, Request
from tenants.selectors import review
from tests.support.cluster import sign_in_as_berth, stand_in
from tests.support.gitops_loop import (
    TOKEN,
    decide,
    project,
    provision_three_projects,
    submit,
    work,
)
from tests.support.gitserver import files_on, git

ARGO = "argoproj.io/v1alpha1"
FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io/v1"
FLUX_SOURCE = "source.toolkit.fluxcd.io/v1"
KARGO = "kargo.akuity.io/v1alpha1"
RBAC = "rbac.authorization.k8s.io/v1"
# Every test runs against the stand-in with the upstream CRDs, and checks what the roots
# read against them.
pytestmark = pytest.mark.crds


def live(sandbox, kind: str, name: str, namespace: str | None = None, *, api: str = "v1"):
    return sandbox.get(kind, name, namespace, api_version=api)


def secret_values(secret: dict) -> dict[str, str]:
    return {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}


def clone(world, tmp_path: Path) -> Path:
    checkout = tmp_path / "clone"
    if checkout.exists():
        shutil.rmtree(checkout)
    git("clone", "--quiet", str(world["bare"]), str(checkout))
    return checkout


def kustomize(directory: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on PATH: `kubectl kustomize` builds what the roots apply")
    built = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert built.returncode == 0, f"kubectl kustomize {directory}: {built.stderr}"
    return [doc for doc in yaml.safe_load_all(built.stdout) if doc]


def test_the_roots_on_the_cluster_read_the_files_in_the_repository(world, sandbox, tmp_path):
    provision_three_projects(world)
    repo_url = world["tenant"].gitops_repo_url

    # --- in the cluster: the roots, bound to the tenant's guardrails, and the credentials
    appproject = live(sandbox, "AppProject", "payments", "argocd", api=ARGO)
    assert appproject["spec"]["sourceRepos"] == [repo_url]
    assert appproject["spec"]["sourceNamespaces"] == ["payments-apps"]
    argo_root = live(sandbox, "Application", "berth-root", "payments-apps", api=ARGO)
    assert argo_root["spec"]["project"] == "payments"  # the tenant's fences, not default
    assert argo_root["spec"]["source"] == {
        "repoURL": repo_url,
        "targetRevision": "main",
        "path": "clusters/sandbox/argocd",
    }
    repository = live(sandbox, "Secret", "berth-repo-payments", "argocd")
    assert repository["metadata"]["labels"]["argocd.argoproj.io/secret-type"] == "repository"
    assert secret_values(repository) == {
        "type": "git",
        "url": repo_url,
        "project": "payments",
        "username": "payments-bot",
        "password": TOKEN,
    }

    source = live(sandbox, "GitRepository", "payments", "payments-gitops", api=FLUX_SOURCE)
    assert source["spec"]["url"] == repo_url
    assert source["spec"]["secretRef"] == {"name": "berth-repo-credentials"}
    assert secret_values(live(sandbox, "Secret", "berth-repo-credentials", "payments-gitops")) == {
        "username": "payments-bot",
        "password": TOKEN,
    }
    flux_root = live(sandbox, "Kustomization", "berth-root", "payments-gitops", api=FLUX_KUSTOMIZE)
    assert flux_root["spec"]["serviceAccountName"] == "berth-reconciler"
    assert flux_root["spec"]["targetNamespace"] == "payments-gitops"
    reconciler = live(sandbox, "RoleBinding", "berth-reconciler", "payments-gitops", api=RBAC)
    assert reconciler["roleRef"]["name"] == "berth-flux-reconciler"
    in_feed = live(sandbox, "RoleBinding", "berth-reconciler", "payments-feed-dev", api=RBAC)
    assert in_feed["roleRef"]["name"] == "berth-tenant-edit"
    assert in_feed["subjects"] == [
        {"kind": "ServiceAccount", "name": "berth-reconciler", "namespace": "payments-gitops"}
    ]

    kargo_credential = live(sandbox, "Secret", "berth-repo-credentials", "payments-cart-kargo")
    assert kargo_credential["metadata"]["labels"]["kargo.akuity.io/cred-type"] == "git"
    assert secret_values(kargo_credential)["repoURL"] == repo_url
    members = live(sandbox, "Role", "berth-members-promote", "payments-cart-kargo", api=RBAC)
    assert members["rules"][0]["resourceNames"] == ["dev", "staging"]
    # (Berth wrote a Role granting `promote`: the stand-in's RBAC let it because the chart
    # gives Berth what such Roles grant, as a real API server requires.)

    # --- in git: every root's directory exists on its revision and builds
    checkout = clone(world, tmp_path)
    # Each root is handed its own engine's objects only: Argo CD would refuse the Flux
    # Kustomization (its namespace is outside the AppProject) and Flux the Applications.
    expected = {
        "clusters/sandbox/argocd": {
            ("Application", "payments-shop-dev"),
            ("Application", "payments-cart-dev"),
            ("Application", "payments-cart-staging"),
            ("Warehouse", "cart"),
            ("Stage", "dev"),
            ("Stage", "staging"),
        },
        "clusters/sandbox/flux": {("Kustomization", "payments-feed-dev")},
    }
    built = []
    for root in (argo_root, flux_root):
        path = (
            (root["spec"].get("source") or {}).get("path") or root["spec"]["path"]
        ).removeprefix("./")
        directory = checkout / path
        assert (directory / "kustomization.yaml").is_file(), path
        objects = kustomize(directory)
        assert validate_objects(objects) == {}
        assert {(obj["kind"], obj["metadata"]["name"]) for obj in objects} == expected[path]
        built += objects
    # What each child reads exists too, and builds: the environments' overlays.
    for obj in built:
        if obj["kind"] == "Application":
            assert obj["spec"]["project"] == "payments"
            assert obj["spec"]["source"]["repoURL"] == repo_url
            kustomize(checkout / obj["spec"]["source"]["path"])
        if obj["kind"] == "Kustomization":
            assert obj["metadata"]["namespace"] == "payments-gitops"
            assert obj["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "payments"}
            assert obj["spec"]["serviceAccountName"] == "berth-reconciler"
            kustomize(checkout / obj["spec"]["path"].removeprefix("./"))


def test_the_plan_shows_roots_and_credentials_redacted_before_approval(world):
    prod = project(world, "shop", "argocd", "prod", approve=False)
    assert prod.state == RequestState.SUBMITTED  # prod: a platform admin approves
    seen = review(prod)
    shown = seen.plan.to_yaml()
    assert "berth-root" in shown and "berth-repo-payments" in shown
    assert TOKEN not in shown
    assert base64.b64encode(TOKEN.encode()).decode() not in shown
    assert "<redacted> sha256:" in shown
    assert "+- ../../../apps/shop/prod\n" in seen.gitops_diff  # the index gains the environment


def test_a_changed_git_diff_sends_the_request_back_to_approval(world, tmp_path):
    prod = project(world, "shop", "argocd", "prod", approve=False)
    assert decide(world, prod).state == RequestState.APPROVED
    # Meanwhile someone writes the overlay Berth would have created: the commit differs.
    checkout = clone(world, tmp_path)
    overlay = checkout / "apps/shop/overlays/prod/kustomization.yaml"
    overlay.parent.mkdir(parents=True)
    overlay.write_text("resources: []\n")
    git("add", "-A", cwd=checkout)
    git("commit", "--quiet", "-m", "Our own overlay", cwd=checkout)
    git("push", "--quiet", "origin", "main", cwd=checkout)

    (after,) = work()

    assert after.state == RequestState.SUBMITTED
    assert "GitOps change moved after approval" in after.status_message
    assert not Request.objects.get(pk=prod.pk).runs.exists()  # nothing was applied


def test_decommissioning_projects_removes_their_files_and_the_last_the_tenants_roots(
    world, sandbox
):
    provision_three_projects(world)

    gone = submit(
        world, RequestKind.PROJECT_DECOMMISSION, project="shop", cluster="sandbox", reason="retired"
    )
    assert gone.state == RequestState.SUBMITTED  # a platform admin decides
    shown = review(gone)
    assert [str(ref) for ref in shown.plan.delete] == ["Namespace/payments-shop-dev"]
    assert "--- a/apps/shop/dev/application.yaml\n+++ /dev/null" in shown.gitops_diff
    decide(world, gone)
    (done,) = work()
    assert done.state == RequestState.READY, done.status_message
    files = files_on(world["bare"])
    assert not [path for path in files if path.startswith("apps/shop/")]
    index = yaml.safe_load(files["clusters/sandbox/argocd/kustomization.yaml"])["resources"]
    assert index == [
        "../../../apps/cart/dev",
        "../../../apps/cart/kargo",
        "../../../apps/cart/staging",
    ]
    # The repository went first: the run's GitOps step precedes the deletes.
    assert [step["action"] for step in done.runs.get().steps][:2] == ["commit", "delete"]
    assert live(sandbox, "Namespace", "payments-shop-dev") is None
    assert live(sandbox, "Application", "berth-root", "payments-apps", api=ARGO)  # others stay

    cart = submit(
        world, RequestKind.PROJECT_DECOMMISSION, project="cart", cluster="sandbox", reason="retired"
    )
    decide(world, cart)
    (done,) = work()
    assert done.state == RequestState.READY, done.status_message
    last = submit(
        world, RequestKind.PROJECT_DECOMMISSION, project="feed", cluster="sandbox", reason="retired"
    )
    # The preview says every delete, the tenant's roots last.
    assert [str(ref) for ref in review(last).plan.delete] == [
        "Namespace/payments-feed-dev",
        "Application/payments-apps/berth-root",
        "Secret/argocd/berth-repo-payments",
        "AppProject/argocd/payments",
        "Namespace/payments-apps",
        "Kustomization/payments-gitops/berth-root",
        "Namespace/payments-gitops",
    ]
    decide(world, last)
    (done,) = work()
    assert done.state == RequestState.READY, done.status_message
    # The tenant's last project on sandbox took the tenant's roots, credentials and Kargo.
    for kind, name, namespace, api in (
        ("Application", "berth-root", "payments-apps", ARGO),
        ("AppProject", "payments", "argocd", ARGO),
        ("Secret", "berth-repo-payments", "argocd", "v1"),
        ("Namespace", "payments-apps", None, "v1"),
        ("Namespace", "payments-gitops", None, "v1"),
        ("Namespace", "payments-cart-kargo", None, "v1"),
        ("Project", "payments-cart-kargo", None, KARGO),
    ):
        assert live(sandbox, kind, name, namespace, api=api) is None, (kind, name)
    assert set(files_on(world["bare"])) == {"README.md"}


def test_each_of_two_clusters_gets_its_own_roots_and_index(world, sandbox, tmp_path):
    with stand_in(termination_seconds=0.05) as other:
        eu = Cluster.objects.create(name="eu", api_url=other.url, has_kargo=True, is_sandbox=True)
        sign_in_as_berth(other, eu)
        # A new cluster gets Berth's guardrails before any tenant namespace, by the worker's
        # job a platform admin queues.
        assert "applied" in install_guardrails(eu.pk)
        world["tenant"].allowed_clusters.add(eu)
        services.request_tenant_sync(
            tenant=world["tenant"], actor=world["admin"], reason="eu opened"
        )
        project(world, "shop", "argocd", "dev")
        project(world, "web", "flux", "dev", cluster="eu")
        for done in work():
            assert done.state == RequestState.READY, (done.kind, done.status_message)

        here = live(sandbox, "Application", "berth-root", "payments-apps", api=ARGO)
        there = live(other, "Application", "berth-root", "payments-apps", api=ARGO)
        assert here["spec"]["source"]["path"] == "clusters/sandbox/argocd"
        assert there["spec"]["source"]["path"] == "clusters/eu/argocd"
        assert (
            live(other, "Kustomization", "berth-root", "payments-gitops", api=FLUX_KUSTOMIZE)[
                "spec"
            ]["path"]
            == "./clusters/eu/flux"
        )
        assert live(sandbox, "Namespace", "payments-web-dev") is None
        assert live(other, "Namespace", "payments-shop-dev") is None
        files = files_on(world["bare"])
        assert yaml.safe_load(files["clusters/sandbox/argocd/kustomization.yaml"])["resources"] == [
            "../../../apps/shop/dev"
        ]
        assert yaml.safe_load(files["clusters/eu/flux/kustomization.yaml"])["resources"] == [
            "../../../apps/web/dev"
        ]
        assert (
            yaml.safe_load(files["clusters/eu/argocd/kustomization.yaml"])["resources"] == []
        )  # the tenant's Argo CD root there reads an empty index
        checkout = clone(world, tmp_path)
        assert {o["metadata"]["name"] for o in kustomize(checkout / "clusters/eu/flux")} == {
            "payments-web-dev"
        }


def test_a_tenant_change_reaches_every_namespace_through_its_own_request(world, sandbox):
    provision_three_projects(world)
    services.update_tenant(
        actor=world["admin"],
        tenant=world["tenant"],
        changes={
            "allowed_domains": ["payments.example.com", "pay.example.net"],
            "member_groups": ["payments-devs", "payments-contractors"],
            "gitops_credentials": f"payments-deploy:{TOKEN}",
        },
    )
    (sync,) = Request.objects.filter(kind=RequestKind.TENANT_SYNC)
    assert sync.state == RequestState.APPROVED  # a platform admin's change: the rule approves
    assert sync.payload["cluster"] == "sandbox"
    (done,) = work()
    assert done.state == RequestState.READY, done.status_message

    for namespace in ("payments-shop-dev", "payments-cart-staging", "payments-feed-dev"):
        domains = live(sandbox, "ConfigMap", "berth-allowed-domains", namespace)
        assert set(domains["data"]) == {"payments.example.com", "pay.example.net"}, namespace
        members = live(sandbox, "RoleBinding", "berth-members", namespace, api=RBAC)
        assert {s["name"] for s in members["subjects"]} == {"payments-devs", "payments-contractors"}
    assert (
        secret_values(live(sandbox, "Secret", "berth-repo-payments", "argocd"))["username"]
        == "payments-deploy"
    )
    claims = live(sandbox, "ServiceAccount", "berth-members", "payments-cart-kargo")
    assert (
        "payments-contractors" in claims["metadata"]["annotations"]["rbac.kargo.akuity.io/claims"]
    )


def test_a_tenant_leaving_a_cluster_takes_everything_it_had_there(world, sandbox):
    provision_three_projects(world)
    leaving = submit(
        world,
        RequestKind.TENANT_DECOMMISSION,
        cluster="sandbox",
        reason="the team moved to the new cluster",
    )
    assert leaving.state == RequestState.SUBMITTED
    shown = review(leaving)
    assert {ref.name for ref in shown.plan.delete if ref.kind == "Namespace"} == {
        "payments-shop-dev",
        "payments-cart-dev",
        "payments-cart-staging",
        "payments-feed-dev",
        "payments-cart-kargo",
        "payments-apps",
        "payments-gitops",
    }
    decide(world, leaving)
    (done,) = work()
    assert done.state == RequestState.READY, done.status_message
    assert not [
        ns for ns in sandbox.objects("Namespace") if ns["metadata"]["name"].startswith("payments-")
    ]
    assert live(sandbox, "AppProject", "payments", "argocd", api=ARGO) is None
    # Every file it had for sandbox went in one commit, the index with them.
    assert set(files_on(world["bare"])) == {"README.md"}
    # The names stay the tenant's (it may come back): only its namespaces' claims went.
    from tenants.models import NamespaceClaim

    held = set(
        NamespaceClaim.objects.filter(tenant=world["tenant"], released_at__isnull=True).values_list(
            "name", flat=True
        )
    )
    assert {"payments-apps", "payments-gitops"} <= held
    assert "payments-shop-dev" not in held


def test_onboarding_says_whether_the_repository_answers_with_its_credential(world, server, client):
    from rest_framework.test import APIClient

    from portal.celery import app as celery_app
    from tenants.models import EnvironmentTier

    # The check is a worker's task: here it runs as it is queued, before the answer is shown.
    celery_app.conf.task_always_eager = True
    api = APIClient()
    api.force_authenticate(world["admin"])
    body = {
        "slug": "ledger",
        "name": "Ledger",
        "gitops_repo_url": server.url("payments.git"),
        "gitops_credentials": "bot:wrong-token",
        "allowed_clusters": ["sandbox"],
        "allowed_tiers": [EnvironmentTier.objects.first().slug],
    }
    try:
        refused = api.post("/api/v1/tenants/", body, format="json")
        answered = api.post(
            "/api/v1/tenants/",
            {**body, "slug": "books", "gitops_credentials": f"bot:{TOKEN}"},
            format="json",
        )
    finally:
        celery_app.conf.task_always_eager = False
    assert refused.status_code == 201, refused.content
    check = refused.json()["repository_check"]
    assert check["status"] == "failed"
    assert "refused the credentials" in check["message"]
    assert "wrong-token" not in str(refused.json())

    assert answered.json()["repository_check"]["status"] == "ok"
    assert "main is at" in answered.json()["repository_check"]["message"]
    # Each new tenant's objects on its cluster follow in a request of their own.
    assert Request.objects.filter(
        tenant__slug="books", kind=RequestKind.TENANT_SYNC, payload__cluster="sandbox"
    ).exists()
