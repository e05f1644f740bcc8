"""The GitOps writer against real git servers on loopback (git daemon, git http-backend),
driven by the provisioning engine against the Kubernetes API stand-in."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from django.db import connection

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from provisioning import gitops, gitops_plan, jobs
from provisioning.jobs import commits
from provisioning.models import GitCommit, GitWrite
from provisioning.plan import (
    ClusterSpec,
    NamespaceSpec,
    PlanInput,
    TenantSpec,
    TierSpec,
)
from provisioning.records import git_writes
from tenants import demo, services
from tenants.choices import Decision, NamespaceState, RequestKind, RequestState
from tenants.models import Approval, Cluster, EnvironmentTier, Namespace, Request, Tenant, User
from tenants.selectors import review
from tests.support.cluster import seed_demo
from tests.support.gitserver import (
    GitDaemon,
    GitHttpServer,
    commits_on,
    files_on,
    git,
    init_bare,
    push_outside_commit,
)
from tests.support.integration import needs_postgres_and_redis, worker_env
from tests.support.workflow import approve_if_needed

WORKER = "gitops-test"
TOKEN = "glpat-Secr3tT0kenValue-9f8e7d"


@pytest.fixture
def fast_git(settings):
    settings.BERTH_GIT_MAX_ATTEMPTS = 3
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    settings.BERTH_GIT_TIMEOUT_SECONDS = 10.0
    return settings


@pytest.fixture
def sandbox():
    with KubeSandbox(
        termination_seconds=0.2,
        crds=upstream_crds(),
        namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES),
    ) as running:
        yield running


@pytest.fixture
def repos(tmp_path) -> Path:
    root = tmp_path / "repos"
    root.mkdir()
    init_bare(root / "payments.git")
    return root


@pytest.fixture
def daemon(repos):
    with GitDaemon(repos) as running:
        yield running


@pytest.fixture
def world(db, sandbox, daemon, fast_git):
    seed_demo(sandbox)
    tenant = Tenant.objects.get(slug="payments")
    tenant.gitops_repo_url = daemon.url("payments.git")
    tenant.save()
    return {
        "tenant": tenant,
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
        "bare": daemon.base / "payments.git",
    }


def approved(world, kind="namespace", **payload) -> Request:
    payload = payload or {
        "app": "shop",
        "tier": "dev",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "2Gi",
    }
    submitted = services.submit_request(
        tenant=world["tenant"], kind=kind, payload=payload, requester=world["developer"]
    )
    return approve_if_needed(submitted, approver=world["admin"])


def converge(tenancy_request: Request) -> Request:
    jobs.converge(request_id=tenancy_request.pk, worker=WORKER)
    tenancy_request.refresh_from_db()
    return tenancy_request


def gitops_step(tenancy_request: Request) -> dict:
    """The run's GitOps step: its last when it adds, its first when it removes."""
    (step,) = [
        step
        for step in tenancy_request.runs.order_by("-pk").first().steps
        if step["action"] == "commit"
    ]
    return step


def berth_commits(bare: Path) -> list[dict]:
    return [c for c in commits_on(bare) if c["request"]]


# --- provisioning writes, decommission removes ------------------------------------------


def test_provisioned_namespace_writes_its_files_in_one_commit_by_the_berth_bot(world):
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY
    step = gitops_step(tenancy_request)
    assert step["action"] == "commit" and step["outcome"] == "committed", step
    files = files_on(world["bare"])
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
        "repoURL": world["tenant"].gitops_repo_url,
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

    commits = berth_commits(world["bare"])
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


def test_rerunning_an_unchanged_request_makes_no_commit(world):
    tenancy_request = converge(approved(world))
    before = commits_on(world["bare"])

    again = jobs.write_gitops(request_id=tenancy_request.pk)

    assert again.outcome == "unchanged"
    assert commits_on(world["bare"]) == before
    assert GitCommit.objects.filter(request=tenancy_request).count() == 1


def test_bot_identity_comes_from_settings(world, settings):
    settings.BERTH_GIT_AUTHOR_NAME = "Platform Bot"
    settings.BERTH_GIT_AUTHOR_EMAIL = "platform-bot@example.com"
    converge(approved(world))
    assert berth_commits(world["bare"])[0]["author"] == "Platform Bot <platform-bot@example.com>"


def test_project_request_writes_the_kargo_pipeline_and_an_application_per_environment(world):
    tenancy_request = converge(
        approved(
            world,
            kind="project",
            app="ledger",
            engine="argocd_kargo",
            cluster="sandbox",
            tiers=["dev", "staging", "prod"],
        )
    )

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    files = files_on(world["bare"])
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
    commits = berth_commits(world["bare"])
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


def test_flux_tenant_gets_a_kustomization_run_as_its_reconciler(world, tmp_path, sandbox):
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
        world["tenant"].refresh_from_db()
        tenancy_request = converge(approved(world))
        assert gitops_step(tenancy_request)["outcome"] == "committed", (
            tenancy_request.runs.get().steps
        )
        files = files_on(repos / "payments.git")
    source = sandbox.get(
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


def test_decommission_removes_the_namespace_files_in_a_new_commit(world):
    created = converge(approved(world))
    other = converge(
        approved(world, app="shop", tier="staging", cluster="sandbox", cpu="1", memory="1Gi")
    )
    assert other.state == RequestState.READY

    removal = converge(
        approved(
            world,
            kind="decommission",
            namespace="payments-shop-dev",
            reason="moved to the new cluster",
        )
    )

    assert removal.state == RequestState.READY, removal.status_message
    created.refresh_from_db()
    assert created.state == RequestState.DECOMMISSIONED
    files = files_on(world["bare"])
    assert "apps/shop/dev/application.yaml" not in files
    assert "apps/shop/overlays/dev/kustomization.yaml" not in files  # untouched skeleton
    assert "apps/shop/staging/application.yaml" in files  # the other environment stays
    assert "apps/shop/base/kustomization.yaml" in files
    commits = berth_commits(world["bare"])
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
        approved(world, kind="decommission", namespace="payments-shop-staging", reason="done")
    )
    assert last.state == RequestState.READY
    # The tenant's roots on sandbox stay (only a project's or the tenant's decommission
    # takes them): their index stays, listing nothing.
    remaining = files_on(world["bare"])
    assert set(remaining) == {"README.md", "clusters/sandbox/argocd/kustomization.yaml"}
    index = remaining["clusters/sandbox/argocd/kustomization.yaml"]
    assert yaml.safe_load(index)["resources"] == []


def test_an_overlay_the_team_edited_is_never_clobbered_nor_deleted(world):
    converge(approved(world))
    edited = files_on(world["bare"])["apps/shop/overlays/dev/kustomization.yaml"] + (
        "patches:\n- path: replicas.yaml\n"
    )
    push_outside_commit(world["bare"], "apps/shop/overlays/dev/kustomization.yaml", edited)
    push_outside_commit(world["bare"], "apps/shop/overlays/dev/replicas.yaml", "replicas: 3\n")

    # Another environment of the same app rewrites the app's directory: dev's overlay stays.
    converge(approved(world, app="shop", tier="staging", cluster="sandbox", cpu="1", memory="1Gi"))
    assert files_on(world["bare"])["apps/shop/overlays/dev/kustomization.yaml"] == edited

    removal = converge(
        approved(world, kind="decommission", namespace="payments-shop-dev", reason="cleanup")
    )
    files = files_on(world["bare"])
    assert files["apps/shop/overlays/dev/kustomization.yaml"] == edited
    assert files["apps/shop/overlays/dev/replicas.yaml"] == "replicas: 3\n"
    assert "apps/shop/dev/application.yaml" not in files
    assert "the team changed it" in gitops_step(removal)["message"]
    assert "Left as they are:" in berth_commits(world["bare"])[0]["body"]


def test_a_managed_file_whose_header_the_team_removed_is_left_alone(world):
    tenancy_request = converge(approved(world))
    path = "apps/shop/dev/application.yaml"
    taken = (
        files_on(world["bare"])[path].split("\n", 1)[1].replace("selfHeal: true", "selfHeal: false")
    )
    push_outside_commit(world["bare"], path, taken)

    written = jobs.write_gitops(request_id=tenancy_request.pk)

    assert written.outcome == "unchanged"
    assert "not Berth's any more" in written.message
    assert files_on(world["bare"])[path] == taken


def test_a_quota_change_writes_nothing_to_the_repository(world):
    converge(approved(world))
    change = converge(
        approved(
            world,
            kind="quota_change",
            namespace="payments-shop-dev",
            cpu="2",
            memory="2Gi",
            storage="5Gi",
        )
    )

    assert change.state == RequestState.READY, change.status_message
    assert gitops_step(change)["outcome"] == "skipped"
    assert len(berth_commits(world["bare"])) == 1


def test_a_directory_where_berth_writes_a_file_fails_with_a_readable_message(world):
    push_outside_commit(world["bare"], "apps/shop/dev/application.yaml/oops.txt", "mine\n")

    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.FAILED
    assert "cannot write apps/shop/dev/application.yaml" in tenancy_request.status_message


def test_tenant_without_a_repository_skips_the_gitops_step_and_says_why(world):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url="")
    world["tenant"].refresh_from_db()
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY
    step = gitops_step(tenancy_request)
    assert step["outcome"] == "skipped"
    assert "no GitOps repository configured" in step["message"]


def test_a_push_refused_because_someone_else_pushed_is_redone_on_the_new_tip(world):
    tenancy_request = approved(world)
    outside = []
    real_push = gitops.Checkout.push

    def push_after_someone_else(self):
        if not outside:
            outside.append(push_outside_commit(world["bare"], "team/notes.md", "hello\n"))
        return real_push(self)

    gitops.Checkout.push = push_after_someone_else
    try:
        tenancy_request = converge(tenancy_request)
    finally:
        gitops.Checkout.push = real_push

    assert tenancy_request.state == RequestState.READY
    files = files_on(world["bare"])
    assert files["team/notes.md"] == "hello\n"
    assert "apps/shop/dev/application.yaml" in files
    commits = commits_on(world["bare"])
    assert commits[1]["sha"] == outside[0]  # Berth's commit sits on top of the team's
    assert GitCommit.objects.get(request=tenancy_request).pushes == 2


def test_after_its_own_push_berth_builds_on_its_copy_and_still_sees_a_later_team_push(world):
    """The working copy is reused as it is after Berth's own push; when the team pushed
    meanwhile, the push is refused and redone on the team's commit, which survives."""
    first = converge(approved(world))
    assert GitCommit.objects.get(request=first).pushes == 1
    outside = push_outside_commit(world["bare"], "team/notes.md", "hello\n")

    second = converge(
        approved(world, app="cart", tier="dev", cluster="sandbox", cpu="1", memory="2Gi")
    )

    assert (first.state, second.state) == (RequestState.READY, RequestState.READY)
    files = files_on(world["bare"])
    assert files["team/notes.md"] == "hello\n"
    assert {"apps/shop/dev/application.yaml", "apps/cart/dev/application.yaml"} <= set(files)
    commits = commits_on(world["bare"])
    assert commits[0]["request"] == str(second.pk) and commits[1]["sha"] == outside
    # Built first on its own last push (refused: the team's commit came since), then again.
    assert GitCommit.objects.get(request=second).pushes == 2


# --- an unreachable remote -------------------------------------------------------------------


def test_unreachable_remote_makes_the_request_wait_then_it_commits_once_by_itself(
    world, daemon, client, settings
):
    from tests.portal.test_metrics import GIT_FAILURES, scrape

    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    failures_before = scrape(client).get(GIT_FAILURES, 0.0)
    daemon.stop()
    tenancy_request = converge(approved(world))
    assert scrape(client)[GIT_FAILURES] == failures_before + 1  # seen on /metrics

    assert tenancy_request.state == RequestState.PROVISIONING  # waiting, not failed
    assert tenancy_request.wait_reason.startswith("repository unreachable: its server did")
    assert "127.0.0.1" not in tenancy_request.wait_reason
    assert gitops_step(tenancy_request)["outcome"] == "pending"
    # The cluster objects were applied; only the repository is missing its files.
    assert all(s["outcome"] == "created" for s in tenancy_request.runs.get().steps[:-1])

    daemon.start()  # same port
    Request.objects.filter(pk=tenancy_request.pk).update(lease_expires_at=None)  # its time
    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.READY
    assert tenancy_request.runs.count() == 1  # resumed, nobody pressed Retry
    assert gitops_step(tenancy_request)["outcome"] == "committed"
    assert "apps/shop/dev/application.yaml" in files_on(world["bare"])
    assert [c["request"] for c in berth_commits(world["bare"])] == [str(tenancy_request.pk)]


def test_unreachable_remote_past_the_deadline_fails_then_retry_converges_once(world, daemon):
    daemon.stop()  # the test settings' deadline is 0: the first outage gives up
    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.FAILED
    assert tenancy_request.status_message.startswith("GitOps commit git://127.0.0.1")
    assert "repository unreachable" in tenancy_request.status_message
    assert gitops_step(tenancy_request)["outcome"] == "failed"

    daemon.start()
    services.retry_request(
        request_id=tenancy_request.pk,
        actor=world["admin"],
        plan_digest=review(tenancy_request).digest,
    )
    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.READY
    assert gitops_step(tenancy_request)["outcome"] == "committed"
    assert [c["request"] for c in berth_commits(world["bare"])] == [str(tenancy_request.pk)]
    # Once more, as the sweep would: nothing new.
    assert jobs.write_gitops(request_id=tenancy_request.pk).outcome == "unchanged"
    assert len(berth_commits(world["bare"])) == 1


def test_a_commit_pushed_by_an_attempt_that_died_is_recorded_not_repeated(world):
    tenancy_request = converge(approved(world))
    GitCommit.objects.filter(request=tenancy_request).delete()  # as if never recorded

    again = jobs.write_gitops(request_id=tenancy_request.pk)

    assert again.outcome == "committed" and "earlier attempt" in again.message
    assert len(berth_commits(world["bare"])) == 1
    recorded = GitCommit.objects.get(request=tenancy_request)
    assert recorded.sha == berth_commits(world["bare"])[0]["sha"]
    assert recorded.files["apps/shop/dev/application.yaml"] == "added"
    assert "apps/shop/dev/application.yaml" in recorded.diff


# --- HTTPS with a token, SSH with a deploy key, and never a credential shown -----------------


@pytest.fixture
def http_repo(repos):
    with GitHttpServer(repos, token=TOKEN) as server:
        yield server


def test_http_remote_with_a_token_is_written(world, http_repo):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=http_repo.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    tenant.gitops_credentials = TOKEN
    tenant.save()
    world["tenant"] = tenant

    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    assert "apps/shop/dev/application.yaml" in files_on(world["bare"])
    assert any(
        seen["method"] == "POST" and seen["path"].endswith("git-receive-pack")
        for seen in http_repo.seen
    )
    assert not any(TOKEN in seen["path"] + seen["query"] for seen in http_repo.seen)


def test_a_token_in_the_url_is_moved_out_of_it(world, http_repo):
    url = http_repo.url("payments.git").replace("http://", f"http://ci-bot:{TOKEN}@")
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=url, gitops_credentials="")
    world["tenant"].refresh_from_db()

    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    step = gitops_step(tenancy_request)
    assert TOKEN not in step["object"] + step["message"]
    recorded = GitCommit.objects.get(request=tenancy_request)
    assert TOKEN not in recorded.repo_url + recorded.diff + recorded.message
    assert TOKEN not in "".join(files_on(world["bare"]).values())


def test_a_wrong_token_fails_at_once_and_no_credential_is_shown_or_logged(world, http_repo, caplog):
    wrong = "ghp_Wr0ngButSecretTokenValue1234"
    Tenant.objects.filter(slug="payments").update(
        gitops_repo_url=http_repo.url("payments.git").replace("http://", f"http://me:{wrong}@")
    )
    world["tenant"].refresh_from_db()
    caplog.set_level(logging.DEBUG)

    tenancy_request = converge(approved(world))

    assert tenancy_request.state == RequestState.FAILED
    step = gitops_step(tenancy_request)
    assert step["outcome"] == "failed" and step["attempts"] == 1  # not retried
    assert "refused the credentials Berth has" in step["message"]
    shown = tenancy_request.status_message + str(tenancy_request.runs.get().steps)
    logged = caplog.text
    for secret in (wrong, f"me:{wrong}"):
        assert secret not in shown
        assert secret not in logged


def test_the_token_never_appears_in_a_command_line(world, http_repo, monkeypatch):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=http_repo.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    tenant.gitops_credentials = TOKEN
    tenant.save()
    commands = []
    real_run = subprocess.run

    def recording_run(args, *rest, **kwargs):
        commands.append(list(args))
        return real_run(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)  # git runs through it
    jobs.write_gitops(request_id=approved(world).pk)

    assert commands
    assert not any(TOKEN in " ".join(command) for command in commands)


def test_git_messages_are_redacted():
    secrets = ["s3cr3t-token-abcdef"]
    text = (
        "fatal: unable to access 'https://bot:s3cr3t-token-abcdef@git.example.com/r.git/': "
        "Authorization: Basic Ym90OnMzY3IzdA== was refused; token s3cr3t-token-abcdef"
    )
    cleaned = gitops.redact(text, secrets)
    assert "s3cr3t" not in cleaned and "Ym90OnMzY3IzdA" not in cleaned
    assert "git.example.com/r.git" in cleaned


def test_ssh_deploy_key_is_a_private_file_that_is_gone_afterwards(fast_git):
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    # A host that resolves: a session checks where it would connect before anything else.
    remote = gitops.Remote.parse("git@localhost:team/gitops.git", credentials=key)
    assert remote.transport == "ssh"
    with gitops.session(remote, gitops.policy_from_settings()) as git:
        command = git.env["GIT_SSH_COMMAND"].split()
        key_file = Path(command[command.index("-i") + 1])
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert key_file.read_text() == key + "\n"
        assert "IdentitiesOnly=yes" in command
        assert "StrictHostKeyChecking=accept-new" in command
        assert git.env["GIT_TERMINAL_PROMPT"] == "0"
        assert not any(
            "PRIVATE KEY" in value or "b3BlbnNz" in value
            for name, value in git.env.items()
            if name != "GIT_SSH_COMMAND"
        )
    assert not key_file.exists()


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://git.example.com/team/gitops.git", "https"),
        ("ssh://git@git.example.com:2222/team/gitops.git", "ssh"),
        ("git@github.com:team/gitops.git", "ssh"),
        ("file:///srv/git/team.git", "file"),
        ("git://127.0.0.1:9418/team.git", "git"),
    ],
)
def test_the_credential_kind_follows_the_url_scheme(url, kind):
    assert gitops.Remote.parse(url).transport == kind


def test_an_unsupported_url_is_refused():
    with pytest.raises(gitops.GitError, match="refusing the GitOps repository URL.*not ftp://"):
        gitops.Remote.parse("ftp://git.example.com/team.git")


# --- the namespace page and the plan preview ------------------------------------------------


def test_namespace_page_shows_the_commit_and_its_diff(world, client):
    tenancy_request = converge(approved(world))
    commit = GitCommit.objects.get(request=tenancy_request)
    namespace = Namespace.objects.get(name="payments-shop-dev")
    client.force_login(world["developer"])

    page = client.get(f"/namespaces/{namespace.pk}/")

    assert page.status_code == 200
    html = page.content.decode()
    assert commit.sha[:12] in html
    assert "+++ b/apps/shop/dev/application.yaml" in html


def test_plan_preview_shows_the_gitops_changes_as_a_diff(world):
    # Staging waits for a tenant owner: the preview is what they would look at.
    submitted = services.submit_request(
        tenant=world["tenant"],
        kind="namespace",
        requester=world["developer"],
        payload={
            "app": "shop",
            "tier": "staging",
            "cluster": "sandbox",
            "cpu": "1",
            "memory": "2Gi",
        },
    )
    assert submitted.state == RequestState.SUBMITTED
    diff = jobs.gitops_preview(submitted).diff

    assert "--- /dev/null\n+++ b/apps/shop/staging/application.yaml\n" in diff
    assert "+  project: payments\n" in diff
    assert not berth_commits(world["bare"])


# --- many workers, one repository -----------------------------------------------------------


def _many_requests(count: int) -> list[int]:
    """`count` namespace requests of one tenant, each its own app, as provisioning leaves
    them just before the GitOps step (namespaces pending, approved by pat)."""
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    tenant = Tenant.objects.get(slug="payments")
    dev, admin = User.objects.get(username="dev"), User.objects.get(username="pat")
    tier, cluster = EnvironmentTier.objects.get(slug="dev"), Cluster.objects.get(name="sandbox")
    ids = []
    for number in range(count):
        app = f"app{number:03d}"
        tenancy_request = Request.objects.create(
            tenant=tenant,
            kind=RequestKind.NAMESPACE,
            requester=dev,
            state=RequestState.PROVISIONING,
            payload={
                "app": app,
                "tier": "dev",
                "cluster": "sandbox",
                "cpu_millis": 100,
                "memory_mib": 128,
                "storage_gib": 0,
            },
        )
        Approval.objects.create(
            request=tenancy_request, approver=admin, decision=Decision.APPROVE, plan_digest="bench"
        )
        Namespace.objects.create(
            name=f"payments-{app}-dev",
            tenant=tenant,
            tier=tier,
            cluster=cluster,
            cpu_millis=100,
            memory_mib=128,
            request=tenancy_request,
            state=NamespaceState.PENDING,
        )
        ids.append(tenancy_request.pk)
    return ids


def _assert_all_arrived(bare: Path, ids: list[int]) -> None:
    commits = berth_commits(bare)
    assert len(commits) == len(ids)
    assert sorted(int(c["request"]) for c in commits) == sorted(ids)  # each exactly once
    applications = [p for p in files_on(bare) if p.endswith("/dev/application.yaml")]
    assert len(applications) == len(ids)


@needs_postgres_and_redis
def test_four_worker_processes_writing_200_requests_to_one_repo_lose_nothing(
    transactional_db, repos, daemon, fast_git
):
    ids = _many_requests(200)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=daemon.url("payments.git"))
    env = {**worker_env(), "BERTH_GIT_BACKOFF_SECONDS": "0.05", "BERTH_LOG_LEVEL": "WARNING"}
    root = Path(__file__).resolve().parents[3]
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.gitserver",
                "write-gitops",
                *map(str, ids[index::4]),
            ],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for index in range(4)
    ]
    outputs = [worker.communicate(timeout=300)[0] for worker in workers]

    assert [worker.returncode for worker in workers] == [0, 0, 0, 0], outputs
    _assert_all_arrived(daemon.base / "payments.git", ids)
    assert GitCommit.objects.count() == 200


def test_four_worker_threads_writing_200_changes_to_one_repo_lose_nothing(
    repos, daemon, fast_git, db
):
    """The writer itself (lock, fetch, reset, commit, push) from four threads at once."""
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the process test above covers this, with the advisory lock")
    remote = gitops.Remote.parse(daemon.url("payments.git"))
    tier = TierSpec(
        "dev",
        "baseline",
        "ingress",
        500,
        512,
        100,
        128,
        {"owner": "edit", "member": "edit", "viewer": "view"},
        position=10,
    )
    tenant = TenantSpec("payments", "Payments", {}, remote.url)
    cluster = ClusterSpec("sandbox", "argocd", True, "ingress-nginx")
    errors: list[BaseException] = []

    def write(number: int) -> None:
        app = f"app{number:03d}"
        inputs = PlanInput(
            request_id=number,
            tenant=tenant,
            cluster=cluster,
            engine="argocd",
            namespaces=(NamespaceSpec(f"payments-{app}-dev", tier, 100, 128, 0),),
            app=app,
        )
        within = gitops_plan.scope(inputs)

        def propose(checkout: gitops.Checkout) -> gitops.Proposal:
            current = checkout.read(within)
            files = gitops_plan.converge(current, gitops_plan.render_files(inputs), within).files
            message = gitops_plan.commit_message(
                kind="namespace",
                request_id=number,
                tenant="payments",
                app=app,
                engine="argocd",
                namespaces=[f"payments-{app}-dev"],
                changed=gitops_plan.changes(current, files),
                approvers=["pat"],
            )
            return gitops.Proposal(current=current, files=files, message=message)

        gitops.write(remote, propose)

    def worker(numbers: list[int]) -> None:
        try:
            for number in numbers:
                write(number)
        except BaseException as exc:
            errors.append(exc)

    numbers = list(range(1, 201))
    threads = [threading.Thread(target=worker, args=(numbers[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)

    assert not errors, errors
    _assert_all_arrived(daemon.base / "payments.git", numbers)


def test_worker_entry_point_writes_the_requests_it_is_given(db, repos, daemon, fast_git):
    ids = _many_requests(2)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=daemon.url("payments.git"))
    from tests.support.gitserver import main

    assert main(["write-gitops", *map(str, ids)]) == 0
    _assert_all_arrived(daemon.base / "payments.git", ids)
    assert os.environ.get("DJANGO_SETTINGS_MODULE") == "tests.settings"


# --- the demo's local repositories ------------------------------------------------------------


def test_demo_gets_a_local_bare_repo_per_tenant_idempotently(db, tmp_path):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    Tenant.objects.filter(slug="search").update(gitops_repo_url="https://git.example.com/s.git")

    urls = demo.seed_git_repos(tmp_path / "git")
    again = demo.seed_git_repos(tmp_path / "git")

    assert urls == again
    assert urls["payments"] == (tmp_path / "git" / "payments.git").as_uri()
    assert Tenant.objects.get(slug="payments").gitops_repo_url == urls["payments"]
    # A repository someone configured is theirs.
    assert Tenant.objects.get(slug="search").gitops_repo_url == "https://git.example.com/s.git"
    for slug in ("payments", "search"):
        bare = tmp_path / "git" / f"{slug}.git"
        assert set(files_on(bare)) == {"README.md"}
        assert len(commits_on(bare)) == 1


def test_a_demo_file_repository_receives_the_files(db, sandbox, fast_git, tmp_path):
    seed_demo(sandbox)
    demo.seed_git_repos(tmp_path / "git")
    world = {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
    }

    tenancy_request = converge(approved(world))

    assert gitops_step(tenancy_request)["outcome"] == "committed"
    assert "apps/shop/dev/application.yaml" in files_on(tmp_path / "git" / "payments.git")


def test_requests_waiting_for_the_writer_go_out_in_one_push_one_commit_each(
    db, repos, daemon, fast_git
):
    ids = _many_requests(3)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=daemon.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    queue = commits.writer_queue(tenant, commits.gitops_remote(tenant))
    # The second and third requests' workers reached the writer while the first's held it.
    for waiting in ids[1:]:
        git_writes.queue_git_write(request_id=waiting, repository=queue)

    first = jobs.write_gitops(request_id=ids[0])

    bare = daemon.base / "payments.git"
    _assert_all_arrived(bare, ids)
    on_remote = {int(c["request"]): c["sha"] for c in berth_commits(bare)}
    recorded = {c.request_id: c for c in GitCommit.objects.all()}
    assert {pk: c.sha for pk, c in recorded.items()} == on_remote  # one commit each
    assert {c.pushes for c in recorded.values()} == {1}  # all three in one push
    assert first.outcome == "committed"

    # The waiting workers find their outcome when the lock is theirs: nothing pushed again.
    second = jobs.write_gitops(request_id=ids[1])
    assert second.outcome == "committed"
    assert second.commit.sha == on_remote[ids[1]]
    assert f"pushed together with request #{ids[0]}'s" in second.message
    assert len(berth_commits(bare)) == 3


def test_a_lone_request_is_pushed_at_once_and_leaves_no_queue(db, repos, daemon, fast_git):
    (only,) = _many_requests(1)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=daemon.url("payments.git"))

    written = jobs.write_gitops(request_id=only)

    assert written.outcome == "committed" and written.commit.pushes == 1
    assert not GitWrite.objects.exists()


def test_a_waiting_request_that_cannot_be_written_does_not_stop_the_push(
    db, repos, daemon, fast_git
):
    first, broken = _many_requests(2)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=daemon.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    git_writes.queue_git_write(
        request_id=broken, repository=commits.writer_queue(tenant, commits.gitops_remote(tenant))
    )
    # Its tier is gone: its plan cannot be rendered.
    Request.objects.filter(pk=broken).update(
        payload={"app": "x", "tier": "gone", "cluster": "sandbox", "cpu_millis": 1, "memory_mib": 1}
    )

    assert jobs.write_gitops(request_id=first).outcome == "committed"

    assert [int(c["request"]) for c in berth_commits(daemon.base / "payments.git")] == [first]
    assert git_writes.git_write_waiting(request_id=broken)  # left for its own worker


# --- commits made in memory, written with one fast-import -----------------------------------


def test_commits_of_one_push_build_on_each_other_with_their_messages_kept_verbatim(
    db, repos, daemon, fast_git
):
    """The second proposal reads what the first commit wrote, though neither is in the
    repository until the push: the cluster index of both apps, not just the last."""
    remote = gitops.Remote.parse(daemon.url("payments.git"))
    message = "Add shop\n\n  kept as written  \n\nBerth-Request: 7\nApproved-by: pat\n"

    def batch(work: gitops.Checkout):
        def first(checkout: gitops.Checkout) -> gitops.Proposal:
            current = checkout.read(["clusters/"])
            return gitops.Proposal(
                current=current,
                message=message,
                files={"clusters/sandbox/index.yaml": "- shop\n", "apps/shop/app.yaml": "shop\n"},
            )

        def second(checkout: gitops.Checkout) -> gitops.Proposal:
            current = checkout.read(["clusters/", "apps/cart/"])
            index = current["clusters/sandbox/index.yaml"] + "- cart\n"
            return gitops.Proposal(
                current=current,
                message="Add cart\n\nBerth-Request: 8\n",
                files={"clusters/sandbox/index.yaml": index, "apps/cart/app.yaml": "cart\n"},
            )

        return [(7, first), (8, second)]

    results = gitops.write_batch(remote, batch)

    bare = daemon.base / "payments.git"
    assert files_on(bare)["clusters/sandbox/index.yaml"] == "- shop\n- cart\n"
    newest, older, *_ = commits_on(bare)
    assert (older["sha"], newest["sha"]) == (results[7].sha, results[8].sha)
    assert older["body"].rstrip("\n") == message.rstrip("\n")
    assert (older["request"], newest["request"]) == ("7", "8")
    assert {r.pushes for r in results.values()} == {1}
    assert git("--git-dir", str(bare), "rev-parse", f"{newest['sha']}^") == older["sha"] + "\n"


def test_a_file_the_team_made_executable_stays_executable_when_berth_rewrites_it(
    db, repos, daemon, fast_git, tmp_path
):
    bare = daemon.base / "payments.git"
    work = tmp_path / "team"
    git("clone", "--quiet", str(bare), str(work))
    (work / "apps").mkdir()
    (work / "apps" / "hook.sh").write_text("#!/bin/sh\n")
    (work / "apps" / "hook.sh").chmod(0o755)
    git("add", "-A", cwd=work)
    git("-c", "user.name=Team", "-c", "user.email=t@x", "commit", "-qm", "hook", cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)
    remote = gitops.Remote.parse(daemon.url("payments.git"))

    gitops.write(
        remote,
        lambda checkout: gitops.Proposal(
            current=checkout.read(["apps/"]),
            files={"apps/hook.sh": "#!/bin/sh\nexit 0\n"},
            message="Berth-Request: 9\n",
        ),
    )

    listed = git("--git-dir", str(bare), "ls-tree", "main", "apps/hook.sh")
    assert listed.startswith("100755 ")
    assert files_on(bare)["apps/hook.sh"] == "#!/bin/sh\nexit 0\n"


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("apps/shop/dev/app.yaml", b"apps/shop/dev/app.yaml"),
        ("apps/a file with spaces.yaml", b"apps/a file with spaces.yaml"),
        ('"quoted.yaml', b'"\\"quoted.yaml"'),
        ("line\nbreak", b'"line\\nbreak"'),
    ],
)
def test_paths_reach_fast_import_as_it_reads_them(path, quoted):
    from provisioning.gitops.checkout import _quoted

    assert _quoted(path) == quoted


def test_a_batch_of_requests_goes_out_in_one_push_one_commit_each(db, repos, daemon, fast_git):
    ids = _many_requests(5)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=daemon.url("payments.git"))

    written = jobs.write_gitops_all(
        requests=list(Request.objects.select_related("tenant").filter(pk__in=ids).order_by("pk"))
    )

    bare = daemon.base / "payments.git"
    _assert_all_arrived(bare, ids)
    assert {w.outcome for w in written.values()} == {"committed"}
    assert {w.commit.pushes for w in written.values()} == {1}
    assert len({w.commit.sha for w in written.values()}) == 5
    assert not GitWrite.objects.exists()  # every queued write taken


def test_what_was_applied_is_on_record_before_the_push(world):
    from django.test.utils import CaptureQueriesContext

    tenancy_request = approved(world)
    with CaptureQueriesContext(connection) as captured:
        converge(tenancy_request)

    writes = [
        q["sql"]
        for q in captured
        if q["sql"].startswith('UPDATE "tenants_run" SET') and '"steps" =' in q["sql"]
    ]
    # The objects' outcomes before the push (a worker dying mid-push keeps them), then the
    # commit's as the run closes.
    assert len(writes) == 2
    assert '"outcome": "created"' in writes[0] and '"outcome": "committed"' not in writes[0]
    assert '"outcome": "committed"' in writes[1]
