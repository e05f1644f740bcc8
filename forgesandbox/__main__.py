"""``python -m forgesandbox``: run the forge stand-in until SIGTERM/SIGINT.

The first line on stdout is ``listening on <API root>`` so a parent process can read the
port; the second is the token (``--token``, else a generated one) of ``--user``. The
repositories live under ``--root`` as ``<owner>/<name>.git``; serve that directory over git's
HTTP protocol beside it (the project's ``python -m portal.gitserver --root <root>`` does)
and pass its URL as ``--git-url``, so clone URLs point there.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from .server import ForgeSandbox


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m forgesandbox", description=__doc__)
    parser.add_argument("--root", type=Path, required=True, help="where the bare repositories live")
    parser.add_argument("--git-url", help="where --root is served over git's HTTP protocol")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--user", default="forge-bot", help="the login the token belongs to")
    parser.add_argument("--token", help="the user's token (default: a random one)")
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        help="OWNER/NAME of a repository made at start, with a README (repeatable); the user "
        "is its admin",
    )
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="do not check requests and answers against GitHub's OpenAPI description",
    )
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    options = parser.parse_args(argv)
    forge = ForgeSandbox(
        options.root,
        git_url=options.git_url,
        host=options.host,
        port=options.port,
        token=options.token,
        user=options.user,
        validate=not options.no_validate,
        verbose=options.verbose,
    )
    for full_name in options.repo:
        if tuple(full_name.split("/", 1)) not in forge.forge.repos:
            forge.create_repo(full_name)
        forge.grant(full_name, options.user, "admin")
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    with forge:
        print(f"listening on {forge.api_url}", flush=True)
        print(f"token {forge.token}", flush=True)
        stopped.wait()


if __name__ == "__main__":
    main()
