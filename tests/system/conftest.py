import shutil

import pytest

from tests.support.cluster import stand_in
from tests.support.gitserver import payments_repo_daemon
from tests.support.jobs_faults import RedisServer, Stack
from tests.support.make_run import make_run_answering  # noqa: F401 - a fixture
from tests.support.prov_world import demo_world_on


# The fault suite's world (tests/system/test_faults_*.py; its machinery is in
# tests/support/jobs_faults.py): the demo on the Kubernetes API stand-in, the payments
# repository on a git daemon, a Redis of the suite's own and the worker and beat processes on
# it. test_e2e.py and test_provisioning_worker.py define worlds of their own (`e2e_world`,
# `worker_engine_world`) and their own `sandbox`.
@pytest.fixture
def sandbox():
    with stand_in(termination_seconds=0.2) as running:
        yield running


@pytest.fixture
def daemon(tmp_path):
    with payments_repo_daemon(tmp_path) as running:
        yield running


@pytest.fixture
def redis_server(tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not on PATH: the fault suite restarts a Redis of its own")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def stack(redis_server, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    running = Stack(redis_server, logs)
    yield running
    running.close()


@pytest.fixture
def worker_world(transactional_db, sandbox, daemon):
    return demo_world_on(sandbox, daemon)
