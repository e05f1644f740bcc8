"""The GitOps loop for the tenant's whole life: onboarding checks that the repository answers
with the tenant's credential, a git diff that changed after approval sends the request back, a
tenant change reaches every namespace, decommissioning projects removes their files (the last
one takes the tenant's roots), and a tenant leaving a cluster takes everything it had there.

Against the Kubernetes API stand-in (Berth as its ServiceAccount with the chart's RBAC, the
upstream Argo CD, Kargo and Flux CRDs) and a git server over HTTP wanting the tenant's token.
"""

from __future__ import annotations

import pytest
import yaml

from tenants import services
from tenants.choices import RequestKind, RequestState
from tenants.models import Request
from tenants.selectors import review
from tests.support.gitops_loop import (
    TOKEN,
    decide,
    decided_and_done,
    project,
    provision_three_projects,
    submit,
    work,
)
from tests.support.gitops_roots import ARGO, KARGO, RBAC, clone, live, secret_values
from tests.support.gitserver import files_on, git
from tests.support.plan_inputs import TENANT_ROOTS_DELETED

# Every test runs against the stand-in with the upstream CRDs, and checks what the roots
# read against them.
pytestmark = pytest.mark.crds


def test_onboarding_says_whether_the_repository_answers_with_its_credential(
    gitops_world, server, client
):
    from rest_framework.test import APIClient

    from portal.celery import app as celery_app
    from tenants.models import EnvironmentTier

    # The check is a worker's task: here it runs as it is queued, before the answer is shown.
    celery_app.conf.task_always_eager = True
    api = APIClient()
    api.force_authenticate(gitops_world["admin"])
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


def test_a_changed_git_diff_sends_the_request_back_to_approval(gitops_world, tmp_path):
    prod = project(gitops_world, "shop", "argocd", "prod", approve=False)
    assert decide(gitops_world, prod).state == RequestState.APPROVED
    # Meanwhile someone writes the overlay Berth would have created: the commit differs.
    checkout = clone(gitops_world, tmp_path)
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


def test_a_tenant_change_reaches_every_namespace_through_its_own_request(gitops_world, sandbox):
    provision_three_projects(gitops_world)
    services.update_tenant(
        actor=gitops_world["admin"],
        tenant=gitops_world["tenant"],
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


def test_decommissioning_projects_removes_their_files_and_the_last_the_tenants_roots(
    gitops_world, sandbox
):
    provision_three_projects(gitops_world)

    gone = submit(
        gitops_world,
        RequestKind.PROJECT_DECOMMISSION,
        project="shop",
        cluster="sandbox",
        reason="retired",
    )
    assert gone.state == RequestState.SUBMITTED  # a platform admin decides
    shown = review(gone)
    assert [str(ref) for ref in shown.plan.delete] == ["Namespace/payments-shop-dev"]
    assert "--- a/apps/shop/dev/application.yaml\n+++ /dev/null" in shown.gitops_diff
    done = decided_and_done(gitops_world, gone)
    files = files_on(gitops_world["bare"])
    assert not [path for path in files if path.startswith("apps/shop/")]
    index = yaml.safe_load(files["clusters/sandbox/argocd/kustomization.yaml"])["resources"]
    assert index == [
        "../../../apps/cart/dev",
        "../../../apps/cart/kargo",
        "../../../apps/cart/staging",
    ]
    # The repository went first: the run's GitOps step precedes the deletes; the tenant's
    # AppProject, no longer naming the namespace, between them.
    steps = done.runs.get().steps
    assert [(step["action"], step["kind"]) for step in steps][:3] == [
        ("commit", "GitOps"),
        ("apply", "AppProject"),
        ("delete", "Namespace"),
    ]
    assert live(sandbox, "Namespace", "payments-shop-dev") is None
    fence = live(sandbox, "AppProject", "payments", "argocd", api=ARGO)["spec"]["destinations"]
    assert "payments-shop-dev" not in {d["namespace"] for d in fence}
    assert "payments-cart-dev" in {d["namespace"] for d in fence}
    assert live(sandbox, "Application", "berth-root", "payments-apps", api=ARGO)  # others stay

    cart = submit(
        gitops_world,
        RequestKind.PROJECT_DECOMMISSION,
        project="cart",
        cluster="sandbox",
        reason="retired",
    )
    decided_and_done(gitops_world, cart)
    last = submit(
        gitops_world,
        RequestKind.PROJECT_DECOMMISSION,
        project="feed",
        cluster="sandbox",
        reason="retired",
    )
    # The preview says every delete, the tenant's roots last.
    assert [str(ref) for ref in review(last).plan.delete] == [
        "Namespace/payments-feed-dev",
        *TENANT_ROOTS_DELETED,
    ]
    decided_and_done(gitops_world, last)
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
    assert set(files_on(gitops_world["bare"])) == {"README.md"}


def test_a_tenant_leaving_a_cluster_takes_everything_it_had_there(gitops_world, sandbox):
    provision_three_projects(gitops_world)
    leaving = submit(
        gitops_world,
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
    decided_and_done(gitops_world, leaving)
    assert not [
        ns for ns in sandbox.objects("Namespace") if ns["metadata"]["name"].startswith("payments-")
    ]
    assert live(sandbox, "AppProject", "payments", "argocd", api=ARGO) is None
    # Every file it had for sandbox went in one commit, the index with them.
    assert set(files_on(gitops_world["bare"])) == {"README.md"}
    # The names stay the tenant's (it may come back): only its namespaces' claims went.
    from tenants.models import NamespaceClaim

    held = set(
        NamespaceClaim.objects.filter(
            tenant=gitops_world["tenant"], released_at__isnull=True
        ).values_list("name", flat=True)
    )
    assert {"payments-apps", "payments-gitops"} <= held
    assert "payments-shop-dev" not in held
