"""A newcomer's first command: `make run` prints its URL once the web server answers, and the
identity provider that signing in starts at answers too. It starts `make run` for real."""

import pytest


def test_make_run_prints_its_url_when_the_web_server_answers(make_run_answering):
    run = make_run_answering
    health = run["health"]

    assert run["line"] == f"Berth is running at {run['url']}/"
    assert not isinstance(health, Exception), f"{run['line']}, yet /healthz: {health}"
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    # Signing in starts at the identity provider: it answers too.
    assert not isinstance(run["provider"], Exception), run["provider"]
    assert run["provider"].status_code == 200


def test_make_run_s_demo_reviews_payments_prod_changes_on_its_forge(make_run_answering):
    """The demo's payments tenant opens pull requests for prod on the forge stand-in that
    `make run` starts (merge-request mode); its dev and staging push directly."""
    import sqlite3
    import time

    import requests

    run = make_run_answering
    deadline = time.monotonic() + 30  # the banner's lines follow its URL line
    while not any(line.startswith("  forge:") for line in run["output"]):
        assert time.monotonic() < deadline, "".join(run["output"][-40:])
        time.sleep(0.1)
    (said,) = [line for line in run["output"] if line.startswith("  forge:")]
    api = said.split()[1].rstrip(",")
    secrets = dict(
        line.split("=", 1) for line in (run["data"] / "dev-secrets.env").read_text().splitlines()
    )
    token = secrets["BERTH_DEMO_FORGE_TOKEN"]
    repo = requests.get(
        f"{api}/repos/demo/payments", headers={"Authorization": f"token {token}"}, timeout=10
    )
    assert repo.status_code == 200 and repo.json()["permissions"]["push"] is True
    with sqlite3.connect(run["data"] / "berth.sqlite3") as db:
        mode, forge, url = db.execute(
            "SELECT changes_by_pull_request, forge_api_url, gitops_repo_url FROM tenants_tenant"
            " WHERE slug = 'payments'"
        ).fetchone()
        tiers = dict(
            db.execute("SELECT slug, changes_by_pull_request FROM tenants_environmenttier")
        )
    assert (mode, forge) == (1, api) and url.endswith("/demo/payments.git")
    assert tiers["prod"] is None and tiers["dev"] == 0 and tiers["staging"] == 0


@pytest.mark.parametrize(
    ("at", "status"), [("Migrated.", 1), ("Berth is running at ", 0)], ids=["migrated", "url"]
)
def test_ctrl_c_at_any_moment_stops_everything_make_run_started(tmp_path, at, status):
    """Every child runs in a session of its own: a Ctrl-C reaches only `make run`, which must
    stop them all at any moment (as the database is migrated; the instant its URL line is
    out), not leave a sandbox, a git server or a web server running with nobody to stop them."""
    import signal
    import socket
    import subprocess

    from tests.support.commands import PYTHON, ROOT, clean_environment
    from tests.support.gitserver import free_port

    ports = {name: free_port() for name in ("web", "idp", "sandbox", "git")}
    process = subprocess.Popen(
        [PYTHON, "-m", "portal.run"],
        cwd=ROOT,
        env=clean_environment(
            BERTH_DATA_DIR=str(tmp_path / "data"),
            BERTH_PORT=str(ports["web"]),
            BERTH_DEVIDP_PORT=str(ports["idp"]),
            BERTH_SANDBOX_PORT=str(ports["sandbox"]),
            BERTH_GITSERVER_PORT=str(ports["git"]),
            PYTHONUNBUFFERED="1",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    said = []
    for line in process.stdout:
        said.append(line)
        if line.startswith(at):
            process.send_signal(signal.SIGINT)
            break
    # To the end of its output: a child left running would hold it open (and time out here).
    rest, _ = process.communicate(timeout=120)
    said.append(rest)

    assert process.returncode == status, "".join(said)
    assert "\nStopped " in "".join(said), "".join(said[-20:])
    for name, port in ports.items():
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"{name} still listens"
