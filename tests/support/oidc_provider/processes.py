"""Starting the providers, each in a process of its own on a free port, and stopping them:
`running_test_provider()` (this package's server, with `TestProvider` to control it) and
`running_dev_idp()` (the development provider Berth ships, `python -m portal.devidp`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from tests.support.oidc_provider.contract import (
    API_AUDIENCE,
    CLIENT_ID,
    CLIENT_SECRET,
    KUBECTL_CLIENT_ID,
)
from tests.support.process_groups import stop_group

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class TestProvider:
    url: str
    __test__ = False  # not a test class, whatever pytest thinks of the name

    def next_login(
        self,
        claims: dict[str, Any],
        defect: str | None = None,
        *,
        access_token_form: str = "at+jwt",
        audience: str = API_AUDIENCE,
    ) -> None:
        response = requests.post(
            f"{self.url}/control/next-login",
            json={
                "claims": claims,
                "defect": defect,
                "access_token": access_token_form,
                "audience": audience,
            },
            timeout=5,
        )
        response.raise_for_status()

    def log(self, event: str | None = None) -> list[dict[str, Any]]:
        entries = requests.get(f"{self.url}/control/log", timeout=5).json()
        return [entry for entry in entries if event is None or entry["event"] == event]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_test_provider() -> Iterator[TestProvider]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.oidc_provider", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line.startswith("ready "):
            raise RuntimeError(f"the test OIDC provider did not start: {line!r}")
        yield TestProvider(url=line.split()[1])
    finally:
        stop_group(process, timeout=10)


@contextmanager
def running_dev_idp(*, berth_url: str, data_dir: Path) -> Iterator[str]:
    """Berth's development provider on a free port, in this process's environment, with
    Berth's client and kubectl's public one registered."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = data_dir / "devidp.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "portal.devidp", "--port", str(port)],
            cwd=ROOT,
            env={
                # kubectl's public client, as `make run` registers it (portal/run.py).
                "KUBE_OIDC_CLIENT_ID": KUBECTL_CLIENT_ID,
                **os.environ,
                "BERTH_DEBUG": "1",
                "BERTH_DEV_OIDC": "1",
                "BERTH_DATA_DIR": str(data_dir),
                "DEVIDP_URL": url,
                "DEVIDP_BERTH_URLS": berth_url,
                "OIDC_CLIENT_ID": CLIENT_ID,
                "OIDC_CLIENT_SECRET": CLIENT_SECRET,
            },
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/openid/jwks", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the development provider did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield f"{url}/openid"
    finally:
        stop_group(process, timeout=10)
