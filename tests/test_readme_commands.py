"""The commands README.md shows, run as written against `make run` (`python -m portal.run`,
on ports and a data directory of the test's own): the API session in its console block, and
every `manage.py` command it names, from a second shell that sets nothing (as a newcomer
types them beside a running `make run`). Then Ctrl-C, and what `make run` says it stopped.

The console block is read from README.md itself, so an edit that breaks a command, or an
output it shows that Berth no longer prints, fails here."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.gitserver import free_port

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PYTHON = str(Path(sys.executable))

# `"key": value` pairs of the outputs README shows, whose values are whole (no "…").
JSON_PAIR = re.compile(r'"(\w+)": ("[^"…]*"|-?\d+)(?=[,}\s])')
# The `manage.py` commands README names, each run below.
MANAGE_COMMAND = re.compile(r"manage\.py (\w+)")


def console_session() -> list[tuple[str, list[str]]]:
    """(command, the output lines README shows for it) from the README's console block: a
    command starts with `$ ` and goes on while a line ends with `\\` or a quote is open."""
    text = README.read_text()
    block = next(b for b in re.findall(r"```console\n(.*?)```", text, re.S)
                 if "create_api_token" in b)
    session: list[tuple[str, list[str]]] = []
    open_command: list[str] = []
    for line in block.splitlines():
        if open_command:
            open_command.append(line)
        elif line.startswith("$ "):
            open_command = [line[2:]]
        else:
            session[-1][1].append(line)
            continue
        joined = "\n".join(open_command)
        if not joined.endswith("\\") and joined.count("'") % 2 == 0:
            session.append((joined, []))
            open_command = []
    return session


def clean_environment(**extra: str) -> dict[str, str]:
    """A shell's environment with nothing of Berth's or of the test settings in it."""
    kept = {key: value for key, value in os.environ.items()
            if not key.startswith(("BERTH_", "DJANGO_", "OIDC_", "DEVIDP_"))
            and key not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "PYTHONPATH")}
    return {**kept, **extra}


@pytest.fixture
def make_run(tmp_path):
    """`make run` on free ports, its data in tmp_path; yields its URL and its output."""
    ports = {name: str(free_port()) for name in ("web", "idp", "sandbox")}
    environment = clean_environment(
        BERTH_DATA_DIR=str(tmp_path / "data"), BERTH_PORT=ports["web"],
        BERTH_DEVIDP_PORT=ports["idp"], BERTH_SANDBOX_PORT=ports["sandbox"],
        PYTHONUNBUFFERED="1",
    )
    process = subprocess.Popen(  # noqa: S603 - our own entry point
        [PYTHON, "-m", "portal.run"], cwd=ROOT, env=environment, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(process.stdout), daemon=True)
    reader.start()
    url = f"http://127.0.0.1:{ports['web']}"
    deadline = time.monotonic() + 180
    while True:
        assert process.poll() is None, "make run exited:\n" + "".join(output[-40:])
        assert time.monotonic() < deadline, "make run did not start:\n" + "".join(output[-40:])
        try:
            if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
    try:
        yield {"url": url, "process": process, "output": output, "data": tmp_path / "data"}
    finally:
        # Its children run in sessions of their own: only make run itself can stop them.
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def run_session(url: str, session: list[tuple[str, list[str]]], tmp_path: Path) -> list[str]:
    """Every command in one shell (the token carries over); what each one printed."""
    marker = "@@@ berth readme command"
    script = ["set -e", f"cd {ROOT}"]
    for command, _ in session:
        script += [f"echo '{marker}'", command.replace("http://127.0.0.1:8000", url), "echo"]
    path = tmp_path / "session.sh"
    path.write_text("\n".join(script) + "\n")
    finished = subprocess.run(  # noqa: S603 - the README's own commands
        ["bash", str(path)], cwd=ROOT, env=clean_environment(BERTH_DATA_DIR=str(
            tmp_path / "data")), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=240,
    )
    printed = finished.stdout.split(marker + "\n")[1:]
    assert finished.returncode == 0 and len(printed) == len(session), finished.stdout
    return printed


def second_shell(data: Path, *arguments: str, **extra: str) -> subprocess.CompletedProcess:
    """`.venv/bin/python manage.py …` typed in another terminal: only where the data is."""
    return subprocess.run(  # noqa: S603 - our own manage.py
        [PYTHON, "manage.py", *arguments], cwd=ROOT, capture_output=True, text=True,
        env=clean_environment(BERTH_DATA_DIR=str(data), **extra), timeout=120,
    )


def test_readme_commands_work_as_written_beside_make_run(make_run, tmp_path):
    session = console_session()
    assert len(session) >= 5, session

    printed = run_session(make_run["url"], session, tmp_path)

    for (command, shown), actual in zip(session, printed, strict=True):
        compact = re.sub(r"\s+", "", actual)
        for line in shown:
            if "…" not in line and not line.lstrip().startswith("{"):
                assert line.strip() in actual, f"{command}\nshows {line!r}; printed:\n{actual}"
            for key, value in JSON_PAIR.findall(line):
                assert re.sub(r"\s+", "", f'"{key}":{value}') in compact, (
                    f"{command}\nshows {key}: {value}; printed:\n{actual}")

    # Every manage.py command README names, from a second shell beside make run.
    named = set(MANAGE_COMMAND.findall(README.read_text()))
    ran = {"create_api_token", "plan", "ensure_superuser"}
    assert named <= ran, f"README names manage.py {sorted(named - ran)}: run them here too"
    plan = second_shell(make_run["data"], "plan", "1")
    digest = second_shell(make_run["data"], "plan", "1", "--digest")
    superuser = second_shell(make_run["data"], "ensure_superuser",
                             BERTH_ADMIN_PASSWORD="readme-test-password")
    assert plan.returncode == 0, plan.stderr
    assert "kind: Namespace" in plan.stdout and "payments-shop-dev" in plan.stdout
    assert digest.returncode == 0 and re.fullmatch(r"[0-9a-f]{64}\n", digest.stdout), digest
    assert superuser.returncode == 0, superuser.stderr

    # Ctrl-C stops everything it started, and says so.
    make_run["process"].send_signal(signal.SIGINT)
    assert make_run["process"].wait(timeout=60) == 0
    said = "".join(make_run["output"])
    everything = "web, worker, beat, the sandbox cluster and the development identity provider"
    assert f"Press Ctrl-C to stop everything: {everything}." in said
    assert f"Stopped {everything}." in said


def test_manage_py_without_settings_or_make_run_data_says_what_to_do(tmp_path):
    result = second_shell(tmp_path / "nothing-here", "create_api_token", "dev")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1  # one line, no traceback
    assert "SECRET_KEY" in result.stderr and "make run" in result.stderr
