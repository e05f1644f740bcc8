"""Headless Chromium (Debian's package) driven by Playwright, for tests that look at pages."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("BERTH_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"

needs_chromium = pytest.mark.skipif(
    not shutil.which(CHROMIUM),
    reason=f"needs Chromium at {CHROMIUM} (apt-get install chromium); .ci/run installs it",
)


def launch_args() -> list[str]:
    return [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]


def screenshot(page, name: str) -> Path:  # noqa: ANN001 - playwright Page
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
