"""`make run`: the whole portal on one machine for development and demos.

Migrates, seeds the demo world, then starts the web app, a Celery worker, the beat
scheduler and a development OIDC provider (portal.devidp) as child processes, prints where
to go and how to sign in, and stops them all on Ctrl-C. DEBUG is on here and only here.
Secrets for development are generated once into the data directory so restarts keep
sessions and encrypted values readable.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cryptography.fernet import Fernet

from portal import gitserver, sandbox
from portal.processes import (
    INTERRUPTS,
    described,
    free_port,
    start_child,
    stop,
    wait_for_health,
    wait_for_port,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# What `manage.py prepare_demo` prints once the database is migrated.
MIGRATED = "Migrated."
PYTHON = sys.executable


def load_or_create_dev_secrets(data_dir: Path) -> dict[str, str]:
    path = data_dir / "dev-secrets.env"
    values: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            if key and value:
                values[key] = value
    wanted = {
        "SECRET_KEY": lambda: secrets.token_urlsafe(50),
        "BERTH_FERNET_KEYS": lambda: Fernet.generate_key().decode(),
        "BERTH_ADMIN_PASSWORD": lambda: secrets.token_urlsafe(12),
        "BERTH_DEV_OIDC_CLIENT_SECRET": lambda: secrets.token_urlsafe(32),
        # Berth's own token in the sandbox cluster (its ServiceAccount, the chart's RBAC).
        "BERTH_SANDBOX_TOKEN": lambda: secrets.token_urlsafe(32),
        # The forge stand-in's token: the payments tenant's pull requests (merge-request mode).
        "BERTH_DEMO_FORGE_TOKEN": lambda: f"ghp_{secrets.token_hex(18)}",
    }
    missing = {key: make() for key, make in wanted.items() if key not in values}
    if missing:
        values.update(missing)
        path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
        path.chmod(0o600)
    return values


def data_directory() -> Path:
    return Path(os.environ.get("BERTH_DATA_DIR", BASE_DIR / "data")).resolve()


def development_environment(data_dir: Path) -> dict[str, str]:
    """What `make run` sets for every process it starts, and what `manage.py` takes in a
    second shell beside it: the generated secrets, DEBUG, the data directory, and the
    development identity provider as the sign-in provider."""
    host = os.environ.get("BERTH_HOST", "127.0.0.1")
    port = os.environ.get("BERTH_PORT", "8000")
    idp_url = f"http://{host}:{os.environ.get('BERTH_DEVIDP_PORT', '8001')}"
    env = load_or_create_dev_secrets(data_dir)
    env.update(
        BERTH_DEBUG="1",
        BERTH_DATA_DIR=str(data_dir),
        DJANGO_SETTINGS_MODULE="portal.settings",
        # Sign-in: Berth uses the development identity provider, its own process.
        BERTH_DEV_OIDC="1",
        OIDC_ISSUER=f"{idp_url}/openid",
        OIDC_CLIENT_ID="berth-dev",
        OIDC_CLIENT_SECRET=env["BERTH_DEV_OIDC_CLIENT_SECRET"],
        # kubectl's own public client (kubelogin), the audience the sandbox cluster trusts.
        KUBE_OIDC_CLIENT_ID="kubernetes",
        # The kubeconfigs' `berth token --exec`: this virtualenv's, on PATH or not.
        BERTH_CLI_COMMAND=str(Path(PYTHON).parent / "berth"),
        OIDC_PROVIDER_NAME="the development identity provider",
        # Its access tokens are RFC 9068 JWTs for this audience (portal/devidp/tokens.py).
        OIDC_API_AUDIENCE="berth-api",
        BERTH_PLATFORM_ADMIN_GROUPS="platform-admins",
        DEVIDP_URL=idp_url,
        DEVIDP_BERTH_URLS=f"http://{host}:{port},http://localhost:{port}",
        # The stand-in, its repositories and any local webhook receiver are on loopback,
        # which Berth otherwise never connects to for a tenant (tenants.egress).
        BERTH_EGRESS_ALLOW=os.environ.get("BERTH_EGRESS_ALLOW", "127.0.0.0/8,::1/128"),
        # The demo's repositories: file:// and the demo git server's plain http:// on
        # loopback, which production refuses (tenants.gitrepo).
        BERTH_GIT_ALLOW_INSECURE="1",
        BERTH_DEMO_GIT_URL=f"http://127.0.0.1:{git_server_port()}",
        # A line per request and per task buried what a newcomer should read (warnings,
        # Berth's own news); set it empty to see them.
        BERTH_LOG_QUIET=os.environ.get(
            "BERTH_LOG_QUIET", "berth.access,celery.app.trace,celery.worker.strategy,celery.beat"
        ),
    )
    return env


def git_server_port() -> int:
    return int(os.environ.get("BERTH_GITSERVER_PORT", str(gitserver.DEFAULT_PORT)))


def database_exists(env: dict[str, str]) -> bool:
    """Whether Berth's database was made by an earlier run (a server named in DATABASE_URL
    is taken to be)."""
    return bool(env.get("DATABASE_URL")) or (Path(env["BERTH_DATA_DIR"]) / "berth.sqlite3").exists()


def main() -> int:
    """Start everything, then wait for Ctrl-C (or a child's exit) and stop everything: every
    child runs in a session of its own, so a Ctrl-C at any moment, before the URL included,
    reaches only this process, which stops them all on its way out."""

    INTERRUPTS.install()
    children: dict[str, subprocess.Popen] = {}
    try:
        return run(children)
    except KeyboardInterrupt:  # Ctrl-C before Berth answered
        return 1
    finally:
        if children:
            stop(children)


def run(children: dict[str, subprocess.Popen]) -> int:
    """Everything `make run` starts goes into `children`; returns the exit status."""
    data_dir = data_directory()
    data_dir.mkdir(parents=True, exist_ok=True)
    host = os.environ.get("BERTH_HOST", "127.0.0.1")
    port = os.environ.get("BERTH_PORT", "8000")
    idp_port = os.environ.get("BERTH_DEVIDP_PORT", "8001")
    idp_url = f"http://{host}:{idp_port}"

    env = dict(os.environ)
    env.update(development_environment(data_dir))
    env.setdefault("PYTHONUNBUFFERED", "1")

    sandbox_port = os.environ.get("BERTH_SANDBOX_PORT", "6550")
    sandbox_url = f"https://127.0.0.1:{sandbox_port}"
    berth_namespace = env.get("BERTH_NAMESPACE", "berth-system")
    prepared = sandbox.prepare(
        data_dir=data_dir, berth_namespace=berth_namespace, berth_token=env["BERTH_SANDBOX_TOKEN"]
    )
    if prepared["upstream_crds"]:
        # Berth checks what it writes against the same CRDs its sandbox serves.
        env["BERTH_CRD_DIR"] = str(prepared["crds"])
    kubeconfig = Path(prepared["kubeconfig"])
    kubeconfig.unlink(missing_ok=True)
    git_dir = data_dir / "git"
    git_dir.mkdir(exist_ok=True)
    # What needs nothing of Berth's database starts at once, beside the preparation: the
    # sandbox cluster, the demo's repositories over HTTP (the Flux tenant's GitRepository
    # takes no file://) and the identity provider (a database of its own).
    start_child(
        children,
        "sandbox",
        sandbox.sandbox_command(
            port=sandbox_port,
            prepared=prepared,
            oidc_issuer=env["OIDC_ISSUER"],
            oidc_client_id=env["KUBE_OIDC_CLIENT_ID"],
        ),
        cwd=BASE_DIR,
        env=env,
    )
    start_child(
        children,
        "git",
        [PYTHON, "-m", "portal.gitserver", f"--root={git_dir}", f"--port={git_server_port()}"],
        cwd=BASE_DIR,
        env=env,
    )
    start_child(
        children,
        "idp",
        [PYTHON, "-m", "portal.devidp", "--host", host, "--port", idp_port],
        cwd=BASE_DIR,
        env=env,
    )
    # The forge on a port chosen now, so that the preparation need not wait for it.
    forge_port = int(os.environ.get("BERTH_FORGE_PORT") or free_port())
    start_child(
        children,
        "forge",
        sandbox.forge_command(env, git_dir, forge_port),
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    forge_api = sandbox.forge_api_url(forge_port)
    # Metrics files of the previous run's processes (prometheus_client multiprocess mode).
    shutil.rmtree(env.get("PROMETHEUS_MULTIPROC_DIR", data_dir / "prometheus"), ignore_errors=True)
    celery = [PYTHON, "-m", "celery", "-A", "portal", "--quiet"]  # no banners over the URL
    # The web server, the longest to start, as soon as the database is migrated (at once on
    # a database made before: it answers once the demo is prepared, when the URL is printed).
    # Checked once already, by the preparation.
    web = [PYTHON, "manage.py", "runserver", f"{host}:{port}", "--noreload", "--skip-checks"]
    # The rest once the demo is prepared, beside the URL: jobs queued before wait for them.
    background = {
        "worker": [
            *celery,
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--without-gossip",
            "--without-mingle",
        ],
        "beat": [*celery, "beat", "--loglevel", "INFO"],
        # It watches the clusters it finds: the demo's is known by now.
        "watcher": [PYTHON, "manage.py", "watch_clusters"],
    }

    def start(commands: dict[str, list[str]]) -> None:
        for name, command in commands.items():
            start_child(children, name, command, cwd=BASE_DIR, env=env)

    if database_exists(env):
        start({"web": web})
    # One process migrates (while the sandbox loads), then seeds the demo once the sandbox
    # has written its kubeconfig: `--option=value`, as a random token may start with "-",
    # which argparse would take for an option of its own.
    preparing = subprocess.Popen(  # noqa: S603 - our manage.py, fixed argv
        [
            PYTHON,
            "manage.py",
            "prepare_demo",
            f"--sandbox-url={sandbox_url}",
            f"--sandbox-token={env['BERTH_SANDBOX_TOKEN']}",
            f"--sandbox-kubeconfig={kubeconfig}",
            f"--git-url={env['BERTH_DEMO_GIT_URL']}",
            f"--forge-api-url={forge_api}",
        ],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for line in preparing.stdout or ():
            print(line, end="", flush=True)
            if line.strip() == MIGRATED and "web" not in children:
                start({"web": web})
        prepared_ok = preparing.wait() == 0
    finally:
        if preparing.poll() is None:  # Ctrl-C while it prepares
            preparing.terminate()
    if children["forge"].poll() is not None:
        print("The forge stand-in did not start: payments pushes directly.", flush=True)
        del children["forge"]
        forge_api = ""
    if prepared_ok and not wait_for_port(git_server_port(), children["git"], timeout=10):
        print("The demo git server did not start; see its output above.", flush=True)
        prepared_ok = False
    if not prepared_ok:
        if children["sandbox"].poll() is not None:
            print("The sandbox cluster did not start; see its output above.", flush=True)
        return 1
    start(background)
    broker = env.get("REDIS_URL") or f"filesystem queue in {data_dir / 'broker'} (no Redis needed)"
    # The URL line only once the web server answers: a browser or curl right after it works.
    answered = wait_for_health(
        [f"http://{host}:{port}/healthz", f"{env['OIDC_ISSUER']}/.well-known/openid-configuration"],
        children,
    )
    if not answered:
        for name, child in children.items():
            if child.poll() is not None:
                which = described({name: child})
                print(
                    f"{which[0].upper()}{which[1:]} exited with status {child.returncode} "
                    "before Berth answered; stopping everything.",
                    flush=True,
                )
        return 1
    banner = (
        f"\nBerth is running at http://{host}:{port}/\n"
        f"  break-glass admin:  admin / {env['BERTH_ADMIN_PASSWORD']}  (at /admin/)\n"
        f"  sign in:            at the development identity provider ({idp_url}/),\n"
        "                      password = the username twice:\n"
        "                      pat / patpat (platform admin), olivia / oliviaolivia (payments\n"
        "                      owner), dev / devdev (payments developer), sam / samsam (search)\n"
        f"  broker:             {broker}\n"
        f"  sandbox cluster:    {sandbox_url}, a local Kubernetes API stand-in; Berth is its\n"
        f"                      ServiceAccount {berth_namespace}/berth with the Helm chart's RBAC\n"
        f"  {sandbox.crds_said(prepared)}\n"
        f"  kubectl:            kubectl --kubeconfig {kubeconfig} get namespaces\n"
        f"  GitOps repos:       {env['BERTH_DEMO_GIT_URL']}/<tenant>.git (clone them to look;\n"
        f"                      a commit's page at <tenant>.git/commit/<sha>), kept in {git_dir}\n"
        + (
            f"  forge:              {forge_api}, a GitHub API stand-in: payments' prod requests\n"
            "                      open pull requests on demo/payments there; review one and\n"
            "                      press Merge or Close on its page (the link Berth shows),\n"
            f"                      {sandbox.forge_page(forge_api, 'pull/<number>')},\n"
            f"                      all of them at {sandbox.forge_page(forge_api, 'pulls')};\n"
            "                      its webhook tells Berth of a merge at once\n"
            if forge_api
            else ""
        )
        + f"  data:               {data_dir}\n"
        + textwrap.fill(f"Press Ctrl-C to stop everything: {described(children)}.", 90)
        + "\n"
    )
    # From the URL line on, a Ctrl-C (even one that lands while the rest is being printed)
    # is the way to stop Berth: success.
    try:
        print(banner, flush=True)
        while True:
            for name, child in children.items():
                if child.poll() is not None:
                    which = described({name: child})
                    print(
                        f"{which[0].upper()}{which[1:]} exited with status "
                        f"{child.returncode}; stopping everything.",
                        flush=True,
                    )
                    return child.returncode or 1
            time.sleep(0.5)
    except KeyboardInterrupt:  # Ctrl-C once Berth runs: the way to stop it
        return 0


if __name__ == "__main__":
    sys.exit(main())
