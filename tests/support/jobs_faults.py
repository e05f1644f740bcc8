"""The fault suite's machinery (tests/system/test_faults_*.py): Berth's dependencies go away
while requests are in flight, and come back. Real processes throughout: PostgreSQL (the test
database), a Redis server of the suite's own (so it can be restarted without touching anyone
else's), Celery worker and beat processes, the Kubernetes API stand-in over HTTP and a git
daemon. For each fault, N requests are approved, the fault strikes while they are being
provisioned, and converge_after waits until every one is Ready: none lost, no object or
commit made twice. Each prints the time from the fault's end to the last request Ready, with
the timings below (the defaults in production are slower:
docs/operations.md#when-a-dependency-goes-away). The fixtures are in tests/system/conftest.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from kombu import Connection

from provisioning import reconcile
from provisioning.models import GitCommit
from provisioning.tasks import converge
from tenants.choices import RequestState
from tenants.models import Request
from tests.support.gitserver import commits_on, free_port
from tests.support.integration import ROOT, wait_for, worker_env
from tests.support.jobs_engine import approved_many
from tests.support.process_groups import stop_group

REQUESTS = int(os.environ.get("BERTH_FAULT_REQUESTS", "4"))
OUTAGE_SECONDS = float(os.environ.get("BERTH_FAULT_OUTAGE_SECONDS", "30"))
# What the worker and beat processes run with: short leases, a sweep every second and
# outage retries every second or two, so a suite of faults fits in minutes. With
# BERTH_FAULT_TIMINGS=production they run with the shipped defaults instead (the figures in
# docs/operations.md), and CONVERGE_TIMEOUT grows to match.
PRODUCTION_TIMINGS = os.environ.get("BERTH_FAULT_TIMINGS") == "production"
TIMINGS = (
    {"BERTH_OUTAGE_DEADLINE_SECONDS": "3600"}
    if PRODUCTION_TIMINGS
    else {
        "BERTH_SWEEP_INTERVAL": "1",
        "BERTH_LEASE_SECONDS": "6",
        "BERTH_OUTAGE_RETRY_SECONDS": "1",
        "BERTH_OUTAGE_RETRY_MAX_SECONDS": "2",
        "BERTH_OUTAGE_DEADLINE_SECONDS": "600",
        "BERTH_GIT_MAX_ATTEMPTS": "2",
        "BERTH_GIT_BACKOFF_SECONDS": "0.05",
        "BERTH_GIT_TIMEOUT_SECONDS": "5",
        "BERTH_KUBE_TIMEOUT_SECONDS": "3",
    }
)
CONVERGE_TIMEOUT = 600.0 if PRODUCTION_TIMINGS else 180.0
APPLICATION_NAME = "berth-fault-suite"  # how the worker and beat processes show in PostgreSQL


class RedisServer:
    """A redis-server of the suite's own on a free port, restartable on the same port."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(self._answers, timeout=10, what="redis-server to answer")

    def _answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # as a crash would: nothing flushed, connections cut
            self.process.wait()
        self.process = None


@contextmanager
def process(
    name: str, args: list[str], env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen]:
    with log.open("ab") as out:
        running = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "portal", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield running
    finally:
        stop_group(running, timeout=20)


class Stack:
    """Worker and beat processes on the suite's Redis, sharing the test database."""

    def __init__(self, redis_server: RedisServer, directory: Path) -> None:
        self.broker_url = redis_server.url
        env = worker_env()
        env["DATABASE_URL"] += f"?application_name={APPLICATION_NAME}"
        self.env = {**env, **TIMINGS, "REDIS_URL": redis_server.url}
        self.directory = directory
        self.workers: list[subprocess.Popen] = []
        self._stack = ExitStack()

    def start_worker(self, name: str) -> subprocess.Popen:
        worker = self._stack.enter_context(
            process(
                name,
                [
                    "worker",
                    "--loglevel",
                    "INFO",
                    "--concurrency",
                    "2",
                    "--hostname",
                    f"{name}@%h",
                    "--without-gossip",
                    "--without-mingle",
                ],
                self.env,
                self.directory / f"{name}.log",
            )
        )
        self.workers.append(worker)
        return worker

    def start_beat(self) -> None:
        self._stack.enter_context(
            process(
                "beat",
                [
                    "beat",
                    "--loglevel",
                    "INFO",
                    "--schedule",
                    str(self.directory / "beat-schedule"),
                ],
                self.env,
                self.directory / "beat.log",
            )
        )

    def kill_worker(self, worker: subprocess.Popen) -> None:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()

    def close(self) -> None:
        self._stack.close()

    def logs(self) -> str:
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
            for log in sorted(self.directory.glob("*.log"))
        )


def hand_out(requests: list[Request], broker_url: str) -> None:
    """What approving does on commit, sent to the suite's Redis (this process's own broker
    setting names another)."""
    with Connection(broker_url) as broker:
        for tenancy_request in requests:
            converge.apply_async((tenancy_request.pk,), connection=broker)


def patches(sandbox) -> int:
    return sum(1 for call in sandbox.requests() if call["method"] == "PATCH")


def all_ready(requests: list[Request]) -> bool:
    states = Request.objects.filter(pk__in=[r.pk for r in requests]).values_list("state", flat=True)
    return all(state == RequestState.READY for state in states)


def converge_after(fault: Callable[[], None], *, world, sandbox, stack, name: str) -> float:
    """Approve N requests, let provisioning start, strike, then time the recovery."""
    stack.start_beat()
    stack.start_worker("first")
    sandbox.inject_delay(0.1, times=None, method="PATCH")  # runs last long enough to be hit
    requests = approved_many(world, REQUESTS)
    hand_out(requests, stack.broker_url)
    wait_for(lambda: patches(sandbox) >= 3, timeout=60, what="provisioning to start")

    fault()
    recovered_at = time.monotonic()
    try:
        wait_for(
            lambda: all_ready(requests),
            timeout=CONVERGE_TIMEOUT,
            interval=0.5,
            what=f"every request Ready after {name}",
        )
    except AssertionError:
        pending = list(
            Request.objects.filter(pk__in=[r.pk for r in requests]).values_list(
                "pk", "state", "wait_reason", "status_message"
            )
        )
        raise AssertionError(f"{pending}\n{stack.logs()}") from None
    seconds = time.monotonic() - recovered_at
    print(f"\nfault {name}: {REQUESTS} requests Ready {seconds:.1f}s after it ended")
    assert_nothing_twice(requests, world=world, sandbox=sandbox)
    return seconds


def assert_nothing_twice(requests: list[Request], *, world, sandbox) -> None:
    for tenancy_request in requests:
        tenancy_request.refresh_from_db()
        plan = reconcile.current_plan(tenancy_request)
        namespace = tenancy_request.payload["app"]
        wanted = sorted(
            (o["kind"], o["metadata"]["name"])
            for o in plan.apply
            if o["metadata"].get("namespace") == f"payments-{namespace}-dev"
        )
        live = sorted(
            (o["kind"], o["metadata"]["name"])
            for o in sandbox.objects()
            if o["metadata"].get("namespace") == f"payments-{namespace}-dev"
        )
        assert live == wanted, tenancy_request.pk
        assert GitCommit.objects.filter(request=tenancy_request).count() == 1
    trailers = [c["request"] for c in commits_on(world["bare"]) if c["request"]]
    assert sorted(trailers) == sorted(str(r.pk) for r in requests)  # one commit each
