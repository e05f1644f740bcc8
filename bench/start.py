"""How long a newcomer waits for `make run`: seconds from starting `python -m portal.run` to
its URL line (printed once the web server and the identity provider answer 200 and the demo
is prepared), cold (a new data directory: migrations, the demo's repositories, keys) and warm
(the same directory again).

    python bench/start.py [--cold 3] [--warm 5]

Each run is on free ports with its own data directory (under a temporary one), stopped with
Ctrl-C (SIGINT) once its URL is printed and waited for. Prints each run's seconds, then the
median of each kind. Exits 1 when a run exits before printing its URL; timings are never
asserted. Last line: the ratio of warm to cold.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
URL_LINE = "Berth is running at "


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_start(data: Path) -> float:
    """Seconds to the URL line of one `make run` over `data`, then stopped."""
    # make run's own stack (SQLite and the filesystem queue in its data directory) and its
    # own settings, whatever the shell names; and not the caller's metrics folder, which
    # make run empties at start.
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("BERTH_", "DJANGO_", "OIDC_", "DEVIDP_"))
        and key not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR")
    }
    environment.update(
        BERTH_DATA_DIR=str(data),
        BERTH_PORT=str(free_port()),
        BERTH_DEVIDP_PORT=str(free_port()),
        BERTH_SANDBOX_PORT=str(free_port()),
        BERTH_GITSERVER_PORT=str(free_port()),
        PYTHONUNBUFFERED="1",
    )
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "portal.run"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    said: list[str] = []
    try:
        for line in process.stdout or ():
            said.append(line)
            if line.startswith(URL_LINE):
                return time.perf_counter() - started
        raise SystemExit("make run exited before its URL line:\n" + "".join(said[-30:]))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        for _ in process.stdout or ():  # what it says while stopping, so it never blocks
            pass
        process.wait(timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", type=int, default=3)
    parser.add_argument("--warm", type=int, default=5)
    args = parser.parse_args()
    if args.cold < 1 or args.warm < 1:
        parser.error("at least one cold and one warm start")
    print(f"bench/start.py: {args.cold} cold and {args.warm} warm starts of make run")
    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-start-"))
    cold = []
    for index in range(args.cold):
        cold.append(one_start(workdir / f"cold-{index}"))
        print(f"cold {index + 1}: {cold[-1]:.1f} s to the URL")
    warm = []
    for index in range(args.warm):
        warm.append(one_start(workdir / "cold-0"))
        print(f"warm {index + 1}: {warm[-1]:.1f} s to the URL")
    cold_p50, warm_p50 = statistics.median(cold), statistics.median(warm)
    print(f"median: cold {cold_p50:.1f} s, warm {warm_p50:.1f} s")
    print(f"ratio warm/cold p50: {warm_p50 / cold_p50:.2f}")


if __name__ == "__main__":
    main()
