"""Fault injection on Berth's own processes and stores while requests are in flight: a worker
SIGKILLed mid-run, Redis restarted twice, the worker's PostgreSQL connections dropped. What each
test waits for and prints: tests/support/jobs_faults.py, which runs the real processes. Run
just these with `pytest -m faults -s` (PostgreSQL and Redis needed, as for `integration`)."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from tests.support.integration import needs_postgres_and_redis
from tests.support.jobs_faults import APPLICATION_NAME, converge_after

pytestmark = [pytest.mark.integration, pytest.mark.faults, needs_postgres_and_redis]


def test_worker_killed_mid_run(worker_world, sandbox, stack):
    def kill_and_replace() -> None:
        stack.kill_worker(stack.workers[0])
        stack.start_worker("second")

    converge_after(
        kill_and_replace,
        world=worker_world,
        sandbox=sandbox,
        stack=stack,
        name="worker SIGKILL mid-run",
    )


def test_redis_restarted_twice(worker_world, sandbox, stack, redis_server):
    def restart_twice() -> None:
        for _ in range(2):
            redis_server.stop()
            time.sleep(2)
            redis_server.start()
            time.sleep(3)
        assert all(worker.poll() is None for worker in stack.workers), stack.logs()

    converge_after(
        restart_twice,
        world=worker_world,
        sandbox=sandbox,
        stack=stack,
        name="Redis restarted twice",
    )


def test_postgresql_connections_dropped(worker_world, sandbox, stack):
    def drop_connections() -> None:
        # The worker and beat processes' connections (they name themselves), not the test
        # run's own: the rest of the suite goes on using those.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = %s",
                [APPLICATION_NAME],
            )
            assert cursor.fetchall(), "no worker connection to drop"

    converge_after(
        drop_connections,
        world=worker_world,
        sandbox=sandbox,
        stack=stack,
        name="PostgreSQL connections dropped",
    )
