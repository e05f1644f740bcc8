"""Where the browser tests put the pictures the docs show (tests/support/browser.py): a test run
never rewrites docs/screenshots/, `make screenshots` does, and retakes every one of them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.browser import SCREENSHOTS_DIR_VARIABLE, docs_screenshots_dir

ROOT = Path(__file__).resolve().parents[2]
DOCS_PICTURES = ROOT / "docs" / "screenshots"

needs_git_checkout = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(),
    reason="needs git and a git checkout of Berth",
)


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


@needs_git_checkout
def test_a_test_run_puts_the_docs_pictures_where_git_ignores_them(monkeypatch):
    monkeypatch.delenv(SCREENSHOTS_DIR_VARIABLE, raising=False)
    picture = docs_screenshots_dir() / "truth-table.png"
    assert not picture.resolve().is_relative_to(DOCS_PICTURES)
    assert git("check-ignore", "--quiet", str(picture)).returncode == 0, picture


@pytest.mark.processes  # make
@needs_git_checkout
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_screenshots_retakes_every_picture_the_docs_show():
    planned = subprocess.run(
        ["make", "--dry-run", "screenshots"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert f"{SCREENSHOTS_DIR_VARIABLE}={DOCS_PICTURES}" in planned
    shown = {Path(path).stem for path in git("ls-files", "docs/screenshots/*.png").stdout.split()}
    taken = set()
    for test_file in (ROOT / "tests" / "browser").glob("test_*.py"):
        taken |= set(re.findall(r'docs_screenshot\(\w+, "([^"]+)"', test_file.read_text()))
    assert shown and shown <= taken, f"pictures no test retakes: {sorted(shown - taken)}"
