"""The `berth` command as a person runs it, for the tests of tests/berth_cli/: its own
process, its own config and cache directories, BERTH_URL and BERTH_TOKEN as they say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The clusters' OIDC issuer (KUBE_OIDC_ISSUER_URL) in these tests: only named, never called.
ISSUER = "https://sso.example.com/realms/acme"


def berth(
    *args: str, token: str = "", url: str = "", home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The command as a person runs it: its own process, its own config and cache dirs."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_"))}
    environment.update(
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        NO_COLOR="1",
        COLUMNS="200",
        **(env or {}),
    )
    if token:
        environment["BERTH_TOKEN"] = token
    if url:
        environment["BERTH_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "berth_cli.main", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
