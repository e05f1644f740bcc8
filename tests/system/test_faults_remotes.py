"""Fault injection on what Berth talks to while requests are in flight: the Kubernetes API
down, the git remote down, and the branch moving under Berth so its pushes are refused. What each
test waits for and prints: tests/support/jobs_faults.py, which runs the real processes. Run
just these with `pytest -m faults -s` (PostgreSQL and Redis needed, as for `integration`)."""

from __future__ import annotations

import threading
import time

import pytest

from provisioning.models import GitCommit
from tests.support.gitserver import push_outside_commit
from tests.support.integration import needs_postgres_and_redis
from tests.support.jobs_faults import OUTAGE_SECONDS, converge_after

pytestmark = [pytest.mark.integration, pytest.mark.faults, needs_postgres_and_redis]


def test_kubernetes_api_down(worker_world, sandbox, stack):
    def outage() -> None:
        sandbox.stop()
        time.sleep(OUTAGE_SECONDS)
        sandbox.start()  # same port, same objects

    converge_after(
        outage,
        world=worker_world,
        sandbox=sandbox,
        stack=stack,
        name=f"Kubernetes API down {OUTAGE_SECONDS:.0f}s",
    )


def test_git_remote_down(worker_world, sandbox, stack, daemon):
    def outage() -> None:
        daemon.stop()
        time.sleep(OUTAGE_SECONDS)
        daemon.start()

    converge_after(
        outage,
        world=worker_world,
        sandbox=sandbox,
        stack=stack,
        name=f"git remote down {OUTAGE_SECONDS:.0f}s",
    )


def test_pushes_refused_while_the_team_pushes(worker_world, sandbox, stack):
    """The branch keeps moving under Berth (the team, Kargo): its pushes are refused (the
    lease on the commit it built on fails), and it rebuilds on the new tip."""
    stop = threading.Event()

    def team_pushes() -> None:
        count = 0
        while not stop.is_set():
            push_outside_commit(worker_world["bare"], f"team/note-{count}.txt", f"{count}\n")
            count += 1
            time.sleep(0.05)

    def refuse_pushes() -> None:
        pusher = threading.Thread(target=team_pushes, daemon=True)
        pusher.start()
        time.sleep(5)
        stop.set()
        pusher.join()

    converge_after(
        refuse_pushes,
        world=worker_world,
        sandbox=sandbox,
        stack=stack,
        name="pushes refused (the branch moved)",
    )
    pushes = sorted(GitCommit.objects.values_list("pushes", flat=True))
    print(f"pushes per commit: {pushes}")
