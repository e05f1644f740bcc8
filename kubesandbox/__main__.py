"""``python -m kubesandbox``: run the Kubernetes stand-in until SIGTERM/SIGINT.

The first line on stdout is ``listening on <url>`` so a parent process can read the port.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from pathlib import Path

from .server import KubeSandbox
from .store import DEFAULT_NAMESPACES


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kubesandbox", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--state-file", type=Path, help="persist objects here across restarts")
    parser.add_argument("--token", help="require 'Authorization: Bearer <token>'")
    parser.add_argument(
        "--termination-seconds",
        type=float,
        default=0.0,
        help="how long a deleted namespace stays Terminating",
    )
    parser.add_argument("--kubeconfig", type=Path, help="also write a kubeconfig for it here")
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        help="a namespace that exists from the start (repeatable), like a platform component's",
    )
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)

    sandbox = KubeSandbox(
        args.host,
        args.port,
        token=args.token,
        state_file=args.state_file,
        termination_seconds=args.termination_seconds,
        namespaces=(*DEFAULT_NAMESPACES, *args.namespace),
        verbose=args.verbose,
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    sandbox.start()
    try:
        if args.kubeconfig:
            args.kubeconfig.write_text(json.dumps(sandbox.kubeconfig(), indent=2))
        print(f"listening on {sandbox.url}", flush=True)
        stop.wait()
    finally:
        sandbox.stop()


if __name__ == "__main__":
    main()
