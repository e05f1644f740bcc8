"""Many workers, one repository, against a local bare repository: four worker
processes or threads writing 200 requests lose nothing, and requests waiting for the writer
go out in one push, one commit each."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.db import connection

from provisioning import gitops, gitops_plan, reconcile
from provisioning.models import GitCommit, GitWrite
from provisioning.plan import ClusterSpec, NamespaceSpec, PlanInput, TenantSpec, TierSpec
from provisioning.reconcile import commits
from provisioning.records import git_writes
from tenants.demo import seed_approved_namespaces
from tenants.models import Request, Tenant
from tests.support.gitops_world import assert_all_arrived, berth_commits
from tests.support.integration import needs_postgres_and_redis, worker_env


@needs_postgres_and_redis
def test_four_worker_processes_writing_200_requests_to_one_repo_lose_nothing(
    transactional_db, repos, local_git, fast_git
):
    ids = seed_approved_namespaces(200)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=local_git.url("payments.git"))
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
    assert_all_arrived(local_git.base / "payments.git", ids)
    assert GitCommit.objects.count() == 200


@pytest.mark.scale
def test_four_worker_threads_writing_200_changes_to_one_repo_lose_nothing(
    repos, local_git, fast_git, db
):
    """The writer itself (lock, fetch, reset, commit, push) from four threads at once."""
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the process test above covers this, with the advisory lock")
    remote = gitops.Remote.parse(local_git.url("payments.git"))
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
    assert_all_arrived(local_git.base / "payments.git", numbers)


def test_worker_entry_point_writes_the_requests_it_is_given(db, repos, local_git, fast_git):
    ids = seed_approved_namespaces(2)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=local_git.url("payments.git"))
    from tests.support.gitserver import main

    assert main(["write-gitops", *map(str, ids)]) == 0
    assert_all_arrived(local_git.base / "payments.git", ids)
    assert os.environ.get("DJANGO_SETTINGS_MODULE") == "tests.settings"


# --- requests waiting for the writer: one push -------------------------------------------


def test_requests_waiting_for_the_writer_go_out_in_one_push_one_commit_each(
    db, repos, local_git, fast_git
):
    ids = seed_approved_namespaces(3)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=local_git.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    queue = commits.writer_queue(tenant, commits.gitops_remote(tenant))
    # The second and third requests' workers reached the writer while the first's held it.
    for waiting in ids[1:]:
        git_writes.queue_git_write(request_id=waiting, repository=queue)

    first = reconcile.write_gitops(request_id=ids[0])

    bare = local_git.base / "payments.git"
    assert_all_arrived(bare, ids)
    on_remote = {int(c["request"]): c["sha"] for c in berth_commits(bare)}
    recorded = {c.request_id: c for c in GitCommit.objects.all()}
    assert {pk: c.sha for pk, c in recorded.items()} == on_remote  # one commit each
    assert {c.pushes for c in recorded.values()} == {1}  # all three in one push
    assert first.outcome == "committed"

    # The waiting workers find their outcome when the lock is theirs: nothing pushed again.
    second = reconcile.write_gitops(request_id=ids[1])
    assert second.outcome == "committed"
    assert second.commit.sha == on_remote[ids[1]]
    assert f"pushed together with request #{ids[0]}'s" in second.message
    assert len(berth_commits(bare)) == 3


def test_a_lone_request_is_pushed_at_once_and_leaves_no_queue(db, repos, local_git, fast_git):
    (only,) = seed_approved_namespaces(1)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=local_git.url("payments.git"))

    written = reconcile.write_gitops(request_id=only)

    assert written.outcome == "committed" and written.commit.pushes == 1
    assert not GitWrite.objects.exists()


def test_a_waiting_request_that_cannot_be_written_does_not_stop_the_push(
    db, repos, local_git, fast_git
):
    first, broken = seed_approved_namespaces(2)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=local_git.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    git_writes.queue_git_write(
        request_id=broken, repository=commits.writer_queue(tenant, commits.gitops_remote(tenant))
    )
    # Its tier is gone: its plan cannot be rendered.
    Request.objects.filter(pk=broken).update(
        payload={"app": "x", "tier": "gone", "cluster": "sandbox", "cpu_millis": 1, "memory_mib": 1}
    )

    assert reconcile.write_gitops(request_id=first).outcome == "committed"

    assert [int(c["request"]) for c in berth_commits(local_git.base / "payments.git")] == [first]
    assert git_writes.git_write_waiting(request_id=broken)  # left for its own worker


def test_a_batch_of_requests_goes_out_in_one_push_one_commit_each(db, repos, local_git, fast_git):
    ids = seed_approved_namespaces(5)
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=local_git.url("payments.git"))

    written = reconcile.write_gitops_all(
        requests=list(Request.objects.select_related("tenant").filter(pk__in=ids).order_by("pk"))
    )

    bare = local_git.base / "payments.git"
    assert_all_arrived(bare, ids)
    assert {w.outcome for w in written.values()} == {"committed"}
    assert {w.commit.pushes for w in written.values()} == {1}
    assert len({w.commit.sha for w in written.values()}) == 5
    assert not GitWrite.objects.exists()  # every queued write taken
