"""Every bench in bench/ runs, at a small count, as its own process on the stack the suite
runs on (PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set, else SQLite and the
filesystem queue), so none of them can rot. What is asserted is what each bench checks
itself (exit status 0: nothing failed, lost or duplicated) and that its last line is its
ratio; never a timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.bench

SMOKE_RUNS = {
    "provision.py": ["--count", "20", "--workers", "1", "--concurrency", "2"],
    "latency.py": ["--count", "5"],
    "gitops.py": ["--count", "20", "--workers", "2"],
    "api.py": [
        "--rows",
        "500",
        "--audit-events",
        "2000",
        "--clients",
        "2",
        "--per-client",
        "10",
        "--workers",
        "1",
    ],
    "ephemeral.py": ["--count", "20"],
    "hibernation.py": ["--count", "5"],
    "standing.py": ["--count", "4", "--window", "2", "--changes", "4"],
    "policy_whatif.py": ["--count", "200"],
    "start.py": ["--cold", "1", "--warm", "1"],
    "pages.py": [
        "--namespaces",
        "40",
        "--requests",
        "400",
        "--audit-events",
        "1000",
        "--tenants",
        "4",
        "--times",
        "2",
    ],
}


def test_every_bench_has_a_smoke_run():
    helpers = {"common.py", "raw_client.py"}  # what the benches share, not benches
    benches = {path.name for path in (ROOT / "bench").glob("*.py")} - helpers
    assert benches == set(SMOKE_RUNS)


@pytest.mark.parametrize("bench", sorted(SMOKE_RUNS))
def test_bench_runs_to_the_end_and_prints_its_ratio_last(bench):
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "BERTH_"))
    }
    finished = subprocess.run(
        [sys.executable, str(ROOT / "bench" / bench), *SMOKE_RUNS[bench]],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    printed = [line for line in finished.stdout.splitlines() if line.strip()]
    assert finished.returncode == 0, "\n".join(
        [*printed[-20:], *finished.stderr.splitlines()[-30:]]
    )
    assert printed[-1].strip().startswith("ratio"), printed[-5:]
    if bench == "provision.py":
        # Where the ratio comes from: each side's CPU, which must have been measured.
        cpu = next(line for line in printed if line.startswith("CPU seconds"))
        figures = [
            float(word)
            for word in cpu.replace("(", " ").split()
            if word.replace(".", "", 1).isdigit()
        ]
        assert len(figures) == 4 and all(figure > 0 for figure in figures), cpu
        # And the baseline at Berth's parallelism: a process per worker pool slot.
        parallel = next(line for line in printed if line.startswith("raw parallel apply"))
        assert "2 processes x" in parallel, parallel
        assert any(line.startswith("ratio berth / raw parallel") for line in printed)
