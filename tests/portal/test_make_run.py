"""What `make run` (portal/run.py) says when it stops, and that stopping leaves nothing behind.

Its children run in sessions of their own, so a Ctrl-C in the terminal reaches only
`make run`: `stop` is the only way they end. Here the children are plain sleepers."""

from __future__ import annotations

import _thread
import signal
import subprocess
import sys
import threading

import pytest

from portal.processes import described, stop
from portal.run import development_environment

EVERYTHING = (
    "the web server, the Celery worker, Celery beat, the sandbox cluster, the demo git "
    "server and the development identity provider"
)


def sleeper(*, ignores_sigterm: bool = False) -> subprocess.Popen:
    code = "import signal, sys, time\n"
    if ignores_sigterm:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(120)\n"
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert child.stdout.readline() == "ready\n"  # its SIGTERM handling is in place
    return child


@pytest.fixture
def children():
    started: dict[str, subprocess.Popen] = {}
    yield started
    for child in started.values():  # whatever a failing test left
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.processes
def test_stop_names_everything_make_run_started(children, capsys):
    for name in ("sandbox", "git", "idp", "web", "worker", "beat"):  # the order main() starts them
        children[name] = sleeper()

    stop(children)

    assert capsys.readouterr().out == f"Stopped {EVERYTHING}.\n"
    assert all(child.poll() is not None for child in children.values())


def test_one_child_is_named_alone():
    assert described({"sandbox": None}) == "the sandbox cluster"
    assert described({"web": None, "idp": None}) == (
        "the web server and the development identity provider"
    )


@pytest.mark.processes
def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period(children, capsys):
    children["worker"] = sleeper(ignores_sigterm=True)

    stop(children, grace=0.5)

    assert children["worker"].returncode == -signal.SIGKILL
    assert capsys.readouterr().out == "Stopped the Celery worker.\n"


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C raises KeyboardInterrupt, as make run's main() installs it, whatever an
    earlier test in this process left as the SIGINT handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.processes
def test_a_second_ctrl_c_kills_at_once(children, capsys, ctrl_c_raises):
    children["worker"] = sleeper(ignores_sigterm=True)
    children["web"] = sleeper()
    # The person presses Ctrl-C again while make run waits for the worker.
    threading.Timer(0.5, _thread.interrupt_main).start()

    stop(children, grace=60)

    # Killed by the second Ctrl-C, not at the end of the minute's grace: it says so first.
    assert children["worker"].returncode == -signal.SIGKILL
    assert capsys.readouterr().out == (
        "Ctrl-C again: killing what is still running.\n"
        "Stopped the web server and the Celery worker.\n"
    )


def test_make_run_allows_the_demos_local_repositories_and_names_its_git_server(
    tmp_path, monkeypatch
):
    """Production refuses http://, git:// and file:// repositories; `make run` serves the
    Flux tenant's over http:// on loopback and keeps the Argo CD tenants' on file://."""
    monkeypatch.setenv("BERTH_GITSERVER_PORT", "8123")

    env = development_environment(tmp_path)

    assert env["BERTH_GIT_ALLOW_INSECURE"] == "1"
    assert env["BERTH_DEMO_GIT_URL"] == "http://127.0.0.1:8123"


def test_make_runs_kubeconfigs_name_kubectls_public_client_not_berths(tmp_path):
    """The "Use it" kubeconfig signs in as `kubernetes`, a public client of the development
    provider (tests/portal/test_devidp_kubectl_client.py), never as Berth's confidential one."""
    env = development_environment(tmp_path)

    assert env["KUBE_OIDC_CLIENT_ID"] == "kubernetes" != env["OIDC_CLIENT_ID"]


def test_make_run_quiets_the_line_per_request_and_per_task_but_not_warnings(tmp_path):
    import logging.config

    from portal.config.observability import logging_config, quiet_loggers

    env = development_environment(tmp_path)
    config = logging_config(log_format="plain", level="INFO")
    config["loggers"].update(quiet_loggers(env["BERTH_LOG_QUIET"]))
    logging.config.dictConfig(config)
    try:
        access, task = logging.getLogger("berth.access"), logging.getLogger("celery.app.trace")
        assert not access.isEnabledFor(logging.INFO) and not task.isEnabledFor(logging.INFO)
        assert access.isEnabledFor(logging.WARNING)
        assert logging.getLogger("tenants.views.forge").isEnabledFor(logging.INFO)
    finally:
        from django.conf import settings

        logging.config.dictConfig(settings.LOGGING)
