"""Helpers for integration tests that run a real Celery worker process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.support.process_groups import stop_group

ROOT = Path(__file__).resolve().parents[2]

needs_postgres_and_redis = pytest.mark.skipif(
    not (
        os.environ.get("DATABASE_URL", "").startswith(("postgres", "postgresql"))
        and os.environ.get("REDIS_URL")
    ),
    reason="needs DATABASE_URL (PostgreSQL) and REDIS_URL: a worker process must share the "
    "test database and broker (make test runs them when both are set, as CI does)",
)


def worker_env() -> dict[str, str]:
    """The test process's environment, pointed at the test database pytest-django created."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": url,
        "BERTH_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        "BERTH_DATA_DIR": str(settings.DATA_DIR),
    }


@contextmanager
def celery_worker(*, concurrency: int = 2, name: str = "itest") -> Iterator[subprocess.Popen]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=worker_env(),
        start_new_session=True,
    )
    try:
        yield process
    finally:
        stop_group(process, timeout=20)


def wait_for(condition, *, timeout: float = 30.0, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
