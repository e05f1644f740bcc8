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
