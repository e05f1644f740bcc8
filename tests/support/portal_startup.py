"""Loading Berth's settings in a fresh Python: what they refuse shows only when a process
starts, once, so each case needs its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setup_django(env: dict[str, str], then: str = "") -> subprocess.CompletedProcess:
    """`django.setup()` in a new Python at the checkout's root with exactly `env`, then the
    statements in `then` (say, a print the test reads)."""
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(){then}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
