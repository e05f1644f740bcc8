"""An unreachable remote and a worker that died mid-write, against a git daemon on
loopback that stops and starts again: the request waits (or fails past the deadline and is
retried), commits once, and what was applied or pushed is on record, never repeated."""

from __future__ import annotations

import pytest
from django.db import connection

from provisioning import reconcile
from provisioning.models import GitCommit
from tenants import services
from tenants.choices import RequestState
from tenants.models import Request
from tenants.selectors import review
from tests.support.gitops_world import berth_commits, gitops_step
from tests.support.gitserver import files_on
from tests.support.metrics import GIT_FAILURES, scrape
from tests.support.workflow import approved, converge

# Each test here starts a program (git, kubectl, python): make test-fast leaves them out.
pytestmark = pytest.mark.processes


def test_unreachable_remote_makes_the_request_wait_then_it_commits_once_by_itself(
    daemon_writer_world, daemon, client, settings
):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    failures_before = scrape(client).get(GIT_FAILURES, 0.0)
    daemon.stop()
    tenancy_request = converge(approved(daemon_writer_world))
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
    assert "apps/shop/dev/application.yaml" in files_on(daemon_writer_world["bare"])
    assert [c["request"] for c in berth_commits(daemon_writer_world["bare"])] == [
        str(tenancy_request.pk)
    ]


def test_unreachable_remote_past_the_deadline_fails_then_retry_converges_once(
    daemon_writer_world, daemon
):
    daemon.stop()  # the test settings' deadline is 0: the first outage gives up
    tenancy_request = converge(approved(daemon_writer_world))

    assert tenancy_request.state == RequestState.FAILED
    assert tenancy_request.status_message.startswith("GitOps commit git://127.0.0.1")
    assert "repository unreachable" in tenancy_request.status_message
    assert gitops_step(tenancy_request)["outcome"] == "failed"

    daemon.start()
    services.retry_request(
        request_id=tenancy_request.pk,
        actor=daemon_writer_world["admin"],
        plan_digest=review(tenancy_request).digest,
    )
    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.READY
    assert gitops_step(tenancy_request)["outcome"] == "committed"
    assert [c["request"] for c in berth_commits(daemon_writer_world["bare"])] == [
        str(tenancy_request.pk)
    ]
    # Once more, as the sweep would: nothing new.
    assert reconcile.write_gitops(request_id=tenancy_request.pk).outcome == "unchanged"
    assert len(berth_commits(daemon_writer_world["bare"])) == 1


def test_a_commit_pushed_by_an_attempt_that_died_is_recorded_not_repeated(daemon_writer_world):
    tenancy_request = converge(approved(daemon_writer_world))
    GitCommit.objects.filter(request=tenancy_request).delete()  # as if never recorded

    again = reconcile.write_gitops(request_id=tenancy_request.pk)

    assert again.outcome == "committed" and "earlier attempt" in again.message
    assert len(berth_commits(daemon_writer_world["bare"])) == 1
    recorded = GitCommit.objects.get(request=tenancy_request)
    assert recorded.sha == berth_commits(daemon_writer_world["bare"])[0]["sha"]
    assert recorded.files["apps/shop/dev/application.yaml"] == "added"
    assert "apps/shop/dev/application.yaml" in recorded.diff


def test_what_was_applied_is_on_record_before_the_push(daemon_writer_world):
    from django.test.utils import CaptureQueriesContext

    tenancy_request = approved(daemon_writer_world)
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
