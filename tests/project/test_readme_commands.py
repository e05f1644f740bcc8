"""The commands README.md shows a person typing, run as written beside `make run`.

`make run` itself (`python -m portal.run`) prepares and runs the portal here, on ports and a
data directory of the test's own, so the data is exactly what a newcomer has: migrated,
the demo seeded, the sandbox cluster and the workers running. Then, from a second shell
that sets nothing but where the data is, every command README.md shows that runs Python
(`manage.py`, `python -m`, `python -c`, a script): the API session of its console block in
one shell (the token carries over), then each other command in a shell of its own. Each
must exit 0 and print what README (or a person) expects. Last, Ctrl-C, and what `make run`
says it stopped.

The commands are read from README.md itself (`readme_commands`), so an edit that breaks
one, a command added without a check here, or an output README shows that Berth no longer
prints, fails this test."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import requests
from cryptography.fernet import Fernet

from portal.run import load_or_create_dev_secrets
from tests.support.commands import PYTHON, ROOT, clean_environment

README = ROOT / "README.md"

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`]+)`")
RUNS_PYTHON = re.compile(r"manage\.py|\bpython\b")
# `"key": value` pairs of the outputs README shows, whose values are whole (no "…").
JSON_PAIR = re.compile(r'"(\w+)": ("[^"…]*"|-?\d+)(?=[,}\s])')

# Commands README shows that cannot run here, and why; a command matches by its pattern.
NOT_RUN_HERE = {
    r"<command>": "the general form of a command, not one",
    r"python -m portal\.devidp": "the identity provider `make run` itself starts (a server)",
    r"DATABASE_URL=\.\.\.": (
        "needs PostgreSQL and Redis; tests/system/test_benches.py runs the benches"
    ),
}
ADMIN_PASSWORD = "readme-test-break-glass"
# What the test writes for README's placeholders; {request_id} is the session's request.
PLACEHOLDERS = {
    "<request-id>": "{request_id}",
    "BERTH_ADMIN_PASSWORD=...": f"BERTH_ADMIN_PASSWORD={ADMIN_PASSWORD}",
    "<cluster>": "sandbox",
}


def readme_commands(text: str) -> tuple[list[str], list[str]]:
    """(the console session, the other commands that run Python), in README's order.

    - A ```console block is a session: a command follows a `$ ` prompt and goes on while a
      line ends with `\\` or leaves a quote open; the lines up to the next prompt are what
      it printed (`console_session`). The block that creates an API token is the session.
    - In a ```sh block each line is a command (`make run  # …`), taken only when it runs
      Python, as is an inline `code` span outside the fenced blocks.
    """
    session = [command for command, _ in console_session(text)]
    others: list[str] = []
    for language, body in FENCE.findall(text):
        if language in ("sh", "shell", "bash"):
            others += body.splitlines()
    others += [" ".join(span.split()) for span in INLINE.findall(FENCE.sub("", text))]
    return session, [command for command in others if RUNS_PYTHON.search(command)]


def console_session(text: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines README shows for it) from the README's console block."""
    block = next(
        body
        for language, body in FENCE.findall(text)
        if language == "console" and "create_api_token" in body
    )
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


def commands_to_run(text: str) -> list[str]:
    """README's other commands, less those that cannot run here (NOT_RUN_HERE) and mentions
    another command spells out in full (`manage.py create_api_token` is the session's)."""
    session, others = readme_commands(text)
    everything = session + others
    return [
        command
        for command in dict.fromkeys(others)
        if not any(re.search(pattern, command) for pattern in NOT_RUN_HERE)
        and not any(command != other and command in other for other in everything)
    ]


def test_readme_parser_finds_the_commands_a_person_types():
    session, others = readme_commands(README.read_text())

    assert session[0].startswith("TOKEN=$(.venv/bin/python manage.py create_api_token dev")
    assert any(command.startswith("curl ") for command in session)
    assert "python -m portal.devidp" in others
    assert not any(command.startswith("make ") for command in others)
    assert set(commands_to_run(README.read_text())) >= {
        "python manage.py plan <request-id>",
        "BERTH_ADMIN_PASSWORD=... python manage.py ensure_superuser",
    }


def in_a_shell(script: str, data: Path, url: str) -> subprocess.CompletedProcess:
    """Commands typed in a second terminal at the checkout, README's URL made this run's."""
    return subprocess.run(
        ["bash", "-c", f"set -e\ncd {ROOT}\n{script.replace('http://127.0.0.1:8000', url)}"],
        cwd=ROOT,
        env=clean_environment(BERTH_DATA_DIR=str(data)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=240,
    )


def run_session(make_run: dict, session: list[tuple[str, list[str]]]) -> list[str]:
    """Every command of the console session in one shell; what each one printed."""
    marker = "@@@ berth readme command"
    script = "\n".join(f"echo '{marker}'\n{command}\necho" for command, _ in session)
    finished = in_a_shell(script, make_run["data"], make_run["url"])
    printed = finished.stdout.split(marker + "\n")[1:]
    assert finished.returncode == 0 and len(printed) == len(session), finished.stdout
    return printed


def check_session_output(session: list[tuple[str, list[str]]], printed: list[str]) -> None:
    """Each line README shows is printed, but for lines cut short with "…"; of JSON, each
    `"key": value` README shows whole."""
    for (command, shown), actual in zip(session, printed, strict=True):
        compact = re.sub(r"\s+", "", actual)
        for line in shown:
            if "…" not in line and not line.lstrip().startswith("{"):
                assert line.strip() in actual, f"{command}\nshows {line!r}; printed:\n{actual}"
            for key, value in JSON_PAIR.findall(line):
                assert re.sub(r"\s+", "", f'"{key}":{value}') in compact, (
                    f"{command}\nshows {key}: {value}; printed:\n{actual}"
                )


def check_plan(output: str, made: dict) -> None:
    assert "kind: Namespace" in output and "name: payments-shop-dev" in output, output


def check_superuser(output: str, made: dict) -> None:
    assert "Updated break-glass superuser 'admin'." in output, output
    # The password typed on the command line is the one that now signs in.
    browser = requests.Session()
    login = f"{made['url']}/admin/login/"
    browser.get(login, timeout=10)
    answer = browser.post(
        login,
        timeout=10,
        headers={"Referer": login},
        data={
            "username": "admin",
            "password": ADMIN_PASSWORD,
            "next": "/admin/",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
    )
    assert answer.url == f"{made['url']}/admin/", "the password README sets does not sign in"


def check_guardrails_queued(output: str, made: dict) -> None:
    assert "sandbox: guardrail install queued for a worker." in output, output


def check_fernet_key(output: str, made: dict) -> None:
    Fernet(output.strip())  # raises unless it is a key for BERTH_FERNET_KEYS


# What each command a person runs should print, by a pattern of the command.
EXPECTED = {
    r"manage\.py plan ": check_plan,
    r"manage\.py ensure_superuser": check_superuser,
    r"Fernet\.generate_key": check_fernet_key,
    r"manage\.py install_guardrails": check_guardrails_queued,
}


@pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "python").exists(),
    reason="README's commands use .venv/bin/python, which `make test` creates",
)
@pytest.mark.processes
def test_readme_commands_work_as_written_beside_make_run(make_run_answering):
    make_run = make_run_answering  # `make run` started for real (tests/support/make_run.py)
    text = README.read_text()
    session = console_session(text)
    assert len(session) >= 5, session

    printed = run_session(make_run, session)
    check_session_output(session, printed)
    check_the_developer_may_deploy(make_run["data"], "payments-shop-dev")
    created = printed[1]
    made = {
        "url": make_run["url"],
        "request_id": re.search(r"Location: /api/v1/requests/(\d+)/", created).group(1),
        "objects_digest": re.search(r'"objects_digest":\s*"([0-9a-f]{64})"', created).group(1),
    }

    # README's other commands, each typed in a shell of its own.
    commands = commands_to_run(text)
    assert commands, "README shows no command besides the session?"
    for command in commands:
        checks = [check for pattern, check in EXPECTED.items() if re.search(pattern, command)]
        assert checks, f"README shows `{command}`: say here what it prints (EXPECTED)"
        typed = command
        for placeholder, value in PLACEHOLDERS.items():
            typed = typed.replace(placeholder, value.format(**made))
        assert not re.search(r"<[\w-]+>|\.\.\.", typed), f"fill in README's `{command}`"
        result = in_a_shell(typed, make_run["data"], make_run["url"])
        assert result.returncode == 0, f"`{typed}` exited {result.returncode}:\n{result.stdout}"
        for check in checks:
            check(result.stdout, made)
        if re.search(r"manage\.py plan ", command):
            # README: "`--digest`: their digest", the API's plan.objects_digest.
            digest = in_a_shell(f"{typed} --digest", make_run["data"], make_run["url"])
            assert digest.stdout == f"{made['objects_digest']}\n", digest.stdout

    # Ctrl-C stops everything it started, and says so.
    make_run["process"].send_signal(signal.SIGINT)
    assert make_run["process"].wait(timeout=60) == 0
    said = " ".join("".join(make_run["output"]).split())
    everything = (
        "the web server, the Celery worker, Celery beat, the drift watcher, the "
        "sandbox cluster, the demo git server, the forge stand-in and the development "
        "identity provider"
    )
    assert f"Press Ctrl-C to stop everything: {everything}." in said
    assert f"Stopped {everything}." in said


def check_the_developer_may_deploy(data: Path, namespace: str) -> None:
    """What the tenant page promises the developer of the namespace the README made, asked
    of the sandbox as kubectl asks a cluster (SelfSubjectAccessReviews, impersonating dev):
    only true where `make run` installed the guardrails' roles the RoleBindings name."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return  # the API session above still ran; kubectl's view needs kubectl
    config = data / "sandbox" / "kubeconfig"

    def can_i(verb: str, resource: str) -> str:
        return subprocess.run(
            [
                kubectl,
                f"--kubeconfig={config}",
                "auth",
                "can-i",
                verb,
                resource,
                "--as=dev",
                "--as-group=payments-devs",
                "-n",
                namespace,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()

    assert can_i("create", "deployments") == "yes"
    assert can_i("get", "pods") == "yes"
    assert can_i("patch", "resourcequotas") == "no"  # the guardrails' edit, minus quota
    assert can_i("create", "rolebindings") == "no"


def second_shell(data: Path, *arguments: str, **extra: str) -> subprocess.CompletedProcess:
    """`.venv/bin/python manage.py …` typed in another terminal: only where the data is."""
    return subprocess.run(
        [PYTHON, "manage.py", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=clean_environment(BERTH_DATA_DIR=str(data), **extra),
        timeout=120,
    )


@pytest.mark.processes
def test_manage_py_takes_make_runs_settings_and_what_the_shell_sets(tmp_path):
    secrets = load_or_create_dev_secrets(tmp_path)
    shown = (
        "from django.conf import settings; import os; print(settings.DEBUG, "
        "settings.SECRET_KEY == os.environ['SECRET_KEY'], settings.DATA_DIR, "
        "os.environ['BERTH_ADMIN_PASSWORD'])"
    )

    result = second_shell(
        tmp_path, "shell", "--no-imports", "-c", shown, BERTH_ADMIN_PASSWORD="typed-here"
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", str(tmp_path.resolve()), "typed-here"]
    assert secrets["SECRET_KEY"] in (tmp_path / "dev-secrets.env").read_text()


@pytest.mark.processes
def test_manage_py_without_settings_or_make_run_data_says_what_to_do(tmp_path):
    result = second_shell(tmp_path / "nothing-here", "create_api_token", "dev")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1  # one line, no traceback
    assert "SECRET_KEY" in result.stderr and "make run" in result.stderr


@pytest.mark.processes
def test_manage_py_with_settings_of_its_own_takes_none_of_make_runs(tmp_path):
    load_or_create_dev_secrets(tmp_path)  # make run's data is there, but SECRET_KEY is set

    result = second_shell(tmp_path, "create_api_token", "dev", SECRET_KEY="x" * 50)

    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "KeyError" not in result.stderr
    assert "BERTH_FERNET_KEYS is not set" in result.stderr
