"""The GitOps writer's world for the tests of this folder that write to a local bare repository
(over file://; through a git daemon where the remote's answering is the subject)
(tests/support/gitops_world.py has their helpers). Its fixtures carry names of their own
(`writer_world`, `writer_sandbox`): the folder's `sandbox` is the GitOps loop's
(tests/provisioning/conftest.py), which the loop's tests and the Kargo takeover regression
use. The repository check's tests take their `admin_api` and `queued` from
tests/support/prov_repository_check.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cluster import shared_stand_in
from tests.support.gitserver import GitDaemon, LocalRepositories, init_bare
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
    """The writer's stand-in: one per test process, a fresh cluster for each test."""
    return shared_stand_in(termination_seconds=0.2)


@pytest.fixture
def repos(tmp_path) -> Path:
    root = tmp_path / "repos"
    root.mkdir()
    init_bare(root / "payments.git")
    return root


@pytest.fixture
def local_git(repos) -> LocalRepositories:
    """`repos` over file://: git with no server between."""
    return LocalRepositories(repos)


@pytest.fixture
def daemon(repos):
    """`repos` served by `git daemon` (a program of its own: the test is `processes`), for the
    tests of a remote that stops answering."""
    with GitDaemon(repos) as running:
        yield running


@pytest.fixture
def writer_world(db, writer_sandbox, local_git, fast_git):
    """The demo on `writer_sandbox`, the payments tenant's repository a local bare one."""
    return demo_world_on(writer_sandbox, local_git)


@pytest.fixture
def daemon_writer_world(db, writer_sandbox, daemon, fast_git):
    """The demo on `writer_sandbox`, the payments tenant's repository on `daemon`."""
    return demo_world_on(writer_sandbox, daemon)
