"""The GitOps writer's world, shared by its tests in tests/provisioning/gitops/: the demo
seeded onto the Kubernetes API stand-in and the payments tenant's repository, a local bare
one over file:// (on a git daemon for the outage tests); the fixtures, `writer_world` among
them, are in that folder's conftest.py.
Here: reading a run's GitOps step and Berth's commits, and whether many requests all arrived
(tests.support.workflow submits and converges them).
"""

from __future__ import annotations

from pathlib import Path

from tenants.models import Request
from tests.support.gitserver import commits_on, files_on

TOKEN = "glpat-Secr3tT0kenValue-9f8e7d"


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


def assert_all_arrived(bare: Path, ids: list[int]) -> None:
    commits = berth_commits(bare)
    assert len(commits) == len(ids)
    assert sorted(int(c["request"]) for c in commits) == sorted(ids)  # each exactly once
    applications = [p for p in files_on(bare) if p.endswith("/dev/application.yaml")]
    assert len(applications) == len(ids)
