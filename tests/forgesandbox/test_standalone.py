"""``python -m forgesandbox`` serves on its own, as a developer runs it beside the git server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import requests

from forgesandbox.spec import missing_reason

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.processes
def test_python_m_forgesandbox_serves_until_terminated(tmp_path: Path) -> None:
    if reason := missing_reason():
        pytest.skip(reason)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forgesandbox",
            "--root",
            str(tmp_path),
            "--git-url",
            "http://127.0.0.1:9/git",
            "--token",
            "ghp_standalone",
            "--repo",
            "acme/gitops",
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        api_url = process.stdout.readline().split()[-1]
        assert process.stdout.readline().strip() == "token ghp_standalone"
        answer = requests.get(
            f"{api_url}/repos/acme/gitops",
            headers={"Authorization": "Bearer ghp_standalone"},
            timeout=30,
        )
        assert answer.status_code == 200
        assert answer.json()["clone_url"] == "http://127.0.0.1:9/git/acme/gitops.git"
        assert answer.json()["permissions"]["admin"]
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_a_forge_restarted_over_its_root_keeps_what_was_pushed(tmp_path: Path) -> None:
    """make run starts the forge over data/git/ on every run: payments' branch stays as
    Berth left it, with no new first commit over it."""
    from forgesandbox import ForgeSandbox

    first = ForgeSandbox(tmp_path, git_url="http://127.0.0.1:9", validate=False)
    first.create_repo("demo/payments")
    pushed = first.push_commit("demo/payments", "main", {"apps/shop/app.yaml": "kind: App\n"})

    again = ForgeSandbox(tmp_path, git_url="http://127.0.0.1:9", validate=False)
    kept = again.create_repo("demo/payments")

    assert kept.git.branch_sha("main") == pushed
