"""No module over 400 lines outside migrations, tests included: a module that long holds
more than one concern, and a newcomer reads it whole. Split one by what it does (a test
module's fixtures into conftest.py, its helpers into tests/support/)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 400


def python_modules() -> dict[str, int]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {
        name: len((ROOT / name).read_text().splitlines())
        for name in listed
        if "/migrations/" not in name and (ROOT / name).is_file()
    }


@pytest.fixture(scope="module")
def lengths() -> dict[str, int]:
    if not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list the project's modules")
    return python_modules()


def test_no_module_is_over_the_limit(lengths):
    over = {name: n for name, n in lengths.items() if n > LIMIT}
    assert not over, f"split these by concern (at most {LIMIT} lines each): {over}"
