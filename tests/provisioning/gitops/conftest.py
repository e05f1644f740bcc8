"""The GitOps writer's world for the tests of this folder that write through a git daemon
(tests/support/gitops_world.py has their helpers). Its fixtures carry names of their own
(`writer_world`, `writer_sandbox`): the folder's `sandbox` is the GitOps loop's
(tests/provisioning/conftest.py), which the loop's tests and the Kargo takeover regression
use. The repository check's tests take their `admin_api` and `queued` from
tests/support/prov_repository_check.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cluster import stand_in
from tests.support.gitserver import GitDaemon, init_bare
from tests.support.prov_repository_check import admin_api, queued  # noqa: F401 - fixtures
from tests.support.prov_world import demo_world_on


@pytest.fixture
def fast_git(settings):
    settings.BERTH_GIT_MAX_ATTEMPTS = 3
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    settings.BERTH_GIT_TIMEOUT_SECONDS = 10.0
    return settings


@pytest.fixture
def writer_sandbox():
    with stand_in(termination_seconds=0.2) as running:
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
def writer_world(db, writer_sandbox, daemon, fast_git):
    """The demo on `writer_sandbox`, the payments tenant's repository on `daemon`."""
    return demo_world_on(writer_sandbox, daemon)
