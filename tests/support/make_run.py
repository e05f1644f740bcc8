"""`make run` started for real, for the tests that follow what it prints and serves."""

import os
import queue
import re
import signal
import subprocess
import threading

import pytest
import requests

from tests.support.commands import PYTHON, ROOT, clean_environment
from tests.support.gitserver import free_port

URL_LINE = re.compile(r"^Berth is \w+ at (?P<url>http://\S+?)/?$")


@pytest.fixture
def make_run_answering(tmp_path):
    """`make run` (`python -m portal.run`) on free ports, its data in tmp_path, followed
    until it prints its URL line; /healthz and the identity provider's discovery document
    are asked the moment it does. Yields its URL, those answers (or errors), its output and
    data directory."""
    ports = {name: str(free_port()) for name in ("web", "idp", "sandbox", "git")}
    environment = clean_environment(
        BERTH_DATA_DIR=str(tmp_path / "data"),
        BERTH_PORT=ports["web"],
        BERTH_DEVIDP_PORT=ports["idp"],
        BERTH_SANDBOX_PORT=ports["sandbox"],
        BERTH_GITSERVER_PORT=ports["git"],
        PYTHONUNBUFFERED="1",
    )
    process = subprocess.Popen(
        [PYTHON, "-m", "portal.run"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in process.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        while True:
            # A cold start (virtualenv warm, migrations, the sandbox) takes a minute or two.
            line = lines.get(timeout=600)
            assert line is not None, "make run exited:\n" + "".join(output[-40:])
            printed = URL_LINE.match(line.strip())
            if printed:
                break
        url = printed["url"]
        answers: dict[str, object] = {}
        for name, asked in (
            ("health", f"{url}/healthz"),
            (
                "provider",
                (f"http://127.0.0.1:{ports['idp']}/openid/.well-known/openid-configuration"),
            ),
        ):
            try:
                answers[name] = requests.get(asked, timeout=10)
            except requests.ConnectionError as exc:
                answers[name] = exc
        yield {
            "url": url,
            "issuer": f"http://127.0.0.1:{ports['idp']}/openid",
            **answers,
            "line": line.strip(),
            "output": output,
            "data": tmp_path / "data",
            "process": process,
        }
    finally:
        # Its children run in sessions of their own: only make run itself can stop them.
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
