"""What provisioning writes to the tenant's repository, against real git (a local bare
repository, and git http-backend on loopback for Flux), driven by the provisioning engine
against the Kubernetes API stand-in: a namespace's or project's files in one commit by the
Berth bot (Argo CD, Argo CD + Kargo, Flux), the files a decommission removes, the requests that
write nothing, and the commit as the namespace page and the plan preview show it."""

from __future__ import annotations

import yaml

from provisioning import reconcile
from provisioning.models import GitCommit
from tenants import services
from tenants.choices import RequestState
from tenants.models import Namespace, Tenant
from tests.support.gitops_world import TOKEN, berth_commits, gitops_step
from tests.support.gitserver import GitHttpServer, commits_on, files_on, init_bare
from tests.support.workflow import SHOP, approved, converge

# --- provisioning writes, decommission removes ------------------------------------------


def test_provisioned_namespace_writes_its_files_in_one_commit_by_the_berth_bot(writer_world):
    tenancy_request = converge(approved(writer_world))

    assert tenancy_request.state == RequestState.READY
    step = gitops_step(tenancy_request)
    assert step["action"] == "commit" and step["outcome"] == "committed", step
    files = files_on(writer_world["bare"])
    assert set(files) == {
        "README.md",
        "apps/shop/base/kustomization.yaml",
        "apps/shop/overlays/dev/kustomization.yaml",
        "apps/shop/dev/application.yaml",
        "apps/shop/dev/kustomization.yaml",
        "clusters/sandbox/argocd/kustomization.yaml",  # what the tenant's roots on sandbox apply
    }
    index = yaml.safe_load(files["clusters/sandbox/argocd/kustomization.yaml"])
    assert index["resources"] == ["../../../apps/shop/dev"]
    application_file = files["apps/shop/dev/application.yaml"]
    assert application_file.startswith(
        f"# Managed by Berth (request #{tenancy_request.pk}). Changes here are overwritten"
    )
    application = yaml.safe_load(application_file)
    assert application["kind"] == "Application"
    assert application["metadata"] == {
        "name": "payments-shop-dev",
        "namespace": "payments-apps",
        "labels": {
            "app.kubernetes.io/part-of": "shop",
            "berth.dev/tenant": "payments",
            "berth.dev/tier": "dev",
        },
        "finalizers": ["resources-finalizer.argocd.argoproj.io"],
    }
    assert application["spec"]["project"] == "payments"
    assert application["spec"]["destination"] == {
        "server": "https://kubernetes.default.svc",
        "namespace": "payments-shop-dev",
    }
    assert application["spec"]["source"] == {
        "repoURL": writer_world["tenant"].gitops_repo_url,
        "targetRevision": "main",
        "path": "apps/shop/overlays/dev",
    }
    overlay = yaml.safe_load(files["apps/shop/overlays/dev/kustomization.yaml"])
    assert overlay == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": "payments-shop-dev",
        "resources": ["../../base"],
    }

    commits = berth_commits(writer_world["bare"])
    assert len(commits) == 1
    commit = commits[0]
    assert commit["author"] == "Berth <berth@localhost>"
    assert commit["subject"] == f"Add payments-shop-dev (namespace request #{tenancy_request.pk})"
    assert commit["request"] == str(tenancy_request.pk)
    assert "Approved-by: policy" in commit["body"]  # the default rules auto-approve dev
    assert "added     apps/shop/dev/application.yaml" in commit["body"]
    recorded = GitCommit.objects.get(request=tenancy_request)
    assert recorded.sha == commit["sha"]
    assert recorded.files["apps/shop/dev/application.yaml"] == "added"
    assert "+++ b/apps/shop/dev/application.yaml" in recorded.diff
    assert list(recorded.namespaces.values_list("name", flat=True)) == ["payments-shop-dev"]
    assert step["message"].startswith(commit["sha"][:12])


def test_rerunning_an_unchanged_request_makes_no_commit(writer_world):
    tenancy_request = converge(approved(writer_world))
    before = commits_on(writer_world["bare"])

    again = reconcile.write_gitops(request_id=tenancy_request.pk)

    assert again.outcome == "unchanged"
    assert commits_on(writer_world["bare"]) == before
    assert GitCommit.objects.filter(request=tenancy_request).count() == 1


def test_bot_identity_comes_from_settings(writer_world, settings):
    settings.BERTH_GIT_AUTHOR_NAME = "Platform Bot"
    settings.BERTH_GIT_AUTHOR_EMAIL = "platform-bot@example.com"
    converge(approved(writer_world))
    assert (
        berth_commits(writer_world["bare"])[0]["author"]
        == "Platform Bot <platform-bot@example.com>"
    )


def test_project_request_writes_the_kargo_pipeline_and_an_application_per_environment(writer_world):
    tenancy_request = converge(
        approved(
            writer_world,
            kind="project",
            app="ledger",
            engine="argocd_kargo",
            cluster="sandbox",
            tiers=["dev", "staging", "prod"],
        )
    )

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    files = files_on(writer_world["bare"])
    for tier in ("dev", "staging", "prod"):
        app = yaml.safe_load(files[f"apps/ledger/{tier}/application.yaml"])
        assert app["metadata"]["annotations"] == {
            "kargo.akuity.io/authorized-stage": f"payments-ledger-kargo:{tier}"
        }
    stages = list(yaml.safe_load_all(files["apps/ledger/kargo/stages.yaml"]))
    assert [s["metadata"]["name"] for s in stages] == ["dev", "staging", "prod"]
    assert {s["metadata"]["namespace"] for s in stages} == {"payments-ledger-kargo"}
    assert [s["spec"]["requestedFreight"][0]["sources"] for s in stages] == [
        {"direct": True},
        {"stages": ["dev"]},
        {"stages": ["staging"]},
    ]
    assert [step["uses"] for step in stages[0]["spec"]["promotionTemplate"]["spec"]["steps"]] == [
        "git-clone",
        "kustomize-set-image",
        "git-commit",
        "git-push",
        "argocd-update",
    ]
    warehouse = yaml.safe_load(files["apps/ledger/kargo/warehouse.yaml"])
    assert warehouse["metadata"] == {
        "name": "ledger",
        "namespace": "payments-ledger-kargo",
        "labels": {
            "app.kubernetes.io/part-of": "ledger",
            "berth.dev/project": "ledger",
            "berth.dev/tenant": "payments",
        },
    }
    commits = berth_commits(writer_world["bare"])
    assert len(commits) == 1
    assert commits[0]["subject"] == f"Add project ledger (project request #{tenancy_request.pk})"
    assert (
        commits[0]["body"]
        .rstrip()
        .endswith(f"Berth-Request: {tenancy_request.pk}\nApproved-by: pat")
    )
    recorded = GitCommit.objects.get(request=tenancy_request)
    assert sorted(recorded.namespaces.values_list("name", flat=True)) == [
        "payments-ledger-dev",
        "payments-ledger-prod",
        "payments-ledger-staging",
    ]


def test_flux_tenant_gets_a_kustomization_run_as_its_reconciler(
    writer_world, tmp_path, writer_sandbox
):
    repos = tmp_path / "https"
    repos.mkdir()
    init_bare(repos / "payments.git")
    with GitHttpServer(repos, token=TOKEN) as server:  # Flux reads https:// and SSH only
        Tenant.objects.filter(slug="payments").update(
            gitops_engine="flux",
            gitops_path="clusters/x",
            gitops_repo_url=server.url("payments.git"),
            gitops_credentials=f"bot:{TOKEN}",
        )
        writer_world["tenant"].refresh_from_db()
        tenancy_request = converge(approved(writer_world))
        assert gitops_step(tenancy_request)["outcome"] == "committed", (
            tenancy_request.runs.get().steps
        )
        files = files_on(repos / "payments.git")
    source = writer_sandbox.get(
        "GitRepository", "payments", "payments-gitops", api_version="source.toolkit.fluxcd.io/v1"
    )
    assert source["spec"]["url"] == server.url("payments.git")
    assert source["spec"]["secretRef"] == {"name": "berth-repo-credentials"}
    (kustomization,) = yaml.safe_load_all(files["clusters/x/apps/shop/dev/flux.yaml"])
    assert kustomization["metadata"]["namespace"] == "payments-gitops"
    assert kustomization["spec"]["serviceAccountName"] == "berth-reconciler"
    assert kustomization["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "payments"}
    assert kustomization["spec"]["targetNamespace"] == "payments-shop-dev"
    assert kustomization["spec"]["path"] == "./clusters/x/apps/shop/overlays/dev"
    assert "clusters/x/apps/shop/dev/application.yaml" not in files
    assert yaml.safe_load(files["clusters/x/clusters/sandbox/flux/kustomization.yaml"])[
        "resources"
    ] == ["../../../apps/shop/dev"]


def test_decommission_removes_the_namespace_files_in_a_new_commit(writer_world):
    created = converge(approved(writer_world))
    other = converge(
        approved(writer_world, app="shop", tier="staging", cluster="sandbox", cpu="1", memory="1Gi")
    )
    assert other.state == RequestState.READY

    removal = converge(
        approved(
            writer_world,
            kind="decommission",
            namespace="payments-shop-dev",
            reason="moved to the new cluster",
        )
    )

    assert removal.state == RequestState.READY, removal.status_message
    created.refresh_from_db()
    assert created.state == RequestState.DECOMMISSIONED
    files = files_on(writer_world["bare"])
    assert "apps/shop/dev/application.yaml" not in files
    assert "apps/shop/overlays/dev/kustomization.yaml" not in files  # untouched skeleton
    assert "apps/shop/staging/application.yaml" in files  # the other environment stays
    assert "apps/shop/base/kustomization.yaml" in files
    commits = berth_commits(writer_world["bare"])
    assert len(commits) == 3
    assert commits[0]["subject"] == f"Remove payments-shop-dev (decommission request #{removal.pk})"
    assert "Reason given: moved to the new cluster" in commits[0]["body"]
    recorded = GitCommit.objects.get(request=removal)
    assert recorded.files == {
        "apps/shop/dev/application.yaml": "deleted",
        "apps/shop/dev/kustomization.yaml": "deleted",
        "apps/shop/overlays/dev/kustomization.yaml": "deleted",
        "clusters/sandbox/argocd/kustomization.yaml": "modified",
    }
    assert list(recorded.namespaces.values_list("name", flat=True)) == ["payments-shop-dev"]

    last = converge(
        approved(
            writer_world, kind="decommission", namespace="payments-shop-staging", reason="done"
        )
    )
    assert last.state == RequestState.READY
    # The tenant's roots on sandbox stay (only a project's or the tenant's decommission
    # takes them): their index stays, listing nothing.
    remaining = files_on(writer_world["bare"])
    assert set(remaining) == {"README.md", "clusters/sandbox/argocd/kustomization.yaml"}
    index = remaining["clusters/sandbox/argocd/kustomization.yaml"]
    assert yaml.safe_load(index)["resources"] == []


def test_a_quota_change_writes_nothing_to_the_repository(writer_world):
    converge(approved(writer_world))
    change = converge(
        approved(
            writer_world,
            kind="quota_change",
            namespace="payments-shop-dev",
            cpu="2",
            memory="2Gi",
            storage="5Gi",
        )
    )

    assert change.state == RequestState.READY, change.status_message
    assert gitops_step(change)["outcome"] == "skipped"
    assert len(berth_commits(writer_world["bare"])) == 1


def test_tenant_without_a_repository_skips_the_gitops_step_and_says_why(writer_world):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url="")
    writer_world["tenant"].refresh_from_db()
    tenancy_request = converge(approved(writer_world))

    assert tenancy_request.state == RequestState.READY
    step = gitops_step(tenancy_request)
    assert step["outcome"] == "skipped"
    assert "no GitOps repository configured" in step["message"]


# --- the namespace page and the plan preview ------------------------------------------------


def test_namespace_page_shows_the_commit_and_its_diff(writer_world, client):
    tenancy_request = converge(approved(writer_world))
    commit = GitCommit.objects.get(request=tenancy_request)
    namespace = Namespace.objects.get(name="payments-shop-dev")
    client.force_login(writer_world["developer"])

    page = client.get(f"/namespaces/{namespace.pk}/")

    assert page.status_code == 200
    html = page.content.decode()
    assert commit.sha[:12] in html
    assert "+++ b/apps/shop/dev/application.yaml" in html


def test_plan_preview_shows_the_gitops_changes_as_a_diff(writer_world):
    # Staging waits for a tenant owner: the preview is what they would look at.
    submitted = services.submit_request(
        tenant=writer_world["tenant"],
        kind="namespace",
        requester=writer_world["developer"],
        payload={**SHOP, "tier": "staging"},
    )
    assert submitted.state == RequestState.SUBMITTED
    diff = reconcile.gitops_preview(submitted).diff

    assert "--- /dev/null\n+++ b/apps/shop/staging/application.yaml\n" in diff
    assert "+  project: payments\n" in diff
    assert not berth_commits(writer_world["bare"])
