"""The `berth` command, against a live Berth (pytest-django's live_server) whose cluster is
the stand-in and whose worker's jobs run as they are queued: request → approve → get →
kubeconfig, an ephemeral environment created with --wait and deleted, errors as the API's
problem details with a non-zero exit, and `berth token --exec`.

Every call the command makes is in berth_cli.calls.CALLS; a test holds that table to the
API's OpenAPI schema, so the command cannot drift from the API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import jwt
import pytest
import yaml

from berth_cli.calls import CALLS
from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from tenants.models import Project, Request, Tenant, User
from tests.support.api import token_for
from tests.support.cluster import seed_demo
from tests.support.oidc_provider import running_dev_idp

ROOT = Path(__file__).resolve().parents[2]
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


# --- the command cannot drift from the API ---------------------------------------------------


def resolved(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


@pytest.mark.django_db
def test_every_call_the_command_makes_is_in_the_api_schema_with_what_it_sends(client):
    schema = json.loads(client.get("/api/schema/", {"format": "json"}).content)

    for name, call in CALLS.items():
        assert call.path in schema["paths"], f"{name}: {call.path} is not in the API"
        operation = schema["paths"][call.path].get(call.method.lower())
        assert operation is not None, f"{name}: {call.method} {call.path} is not in the API"
        parameters = {(p["in"], p["name"]) for p in operation.get("parameters", [])}
        placeholders = {part[1:-1] for part in call.path.split("/") if part.startswith("{")}
        assert {("path", p) for p in placeholders} <= parameters, name
        assert {("query", q) for q in call.query} <= parameters, name
        if call.body:
            body = resolved(
                schema, operation["requestBody"]["content"]["application/json"]["schema"]
            )
            assert set(call.body) <= set(body["properties"]), name


def test_the_project_installs_the_berth_console_script():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    assert project["scripts"]["berth"] == "berth_cli.main:main"
    assert (
        "berth_cli*"
        in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"][
            "find"
        ]["include"]
    )


def test_help_is_everywhere_and_completion_is_printed(tmp_path):
    for command in (
        [],
        ["request", "namespace"],
        ["env", "create"],
        ["get"],
        ["token"],
        ["kubeconfig"],
        ["approve"],
        ["login"],
    ):
        shown = berth(*command, "--help", home=tmp_path)
        assert shown.returncode == 0, (command, shown.stderr)
        assert "Usage: " in shown.stdout
    completion = berth("completion", "bash", home=tmp_path)
    assert completion.returncode == 0 and "_BERTH_COMPLETE" in completion.stdout


# --- end to end against a live server --------------------------------------------------------


@pytest.fixture
def live(live_server, settings, tmp_path):
    from portal.celery import app as celery_app

    settings.KUBE_OIDC_ISSUER_URL = ISSUER
    settings.KUBE_OIDC_CLIENT_ID = "kubernetes"
    settings.BERTH_API_RATE = "100000/min"
    with KubeSandbox(
        crds=upstream_crds(), namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES)
    ) as sandbox:
        seed_demo(sandbox)
        Project.objects.get_or_create(tenant=Tenant.objects.get(slug="payments"), name="shop")
        # The worker's jobs run as they are queued, in the live server's thread.
        celery_app.conf.task_always_eager = True
        try:
            yield {
                "url": live_server.url,
                "sandbox": sandbox,
                "home": tmp_path,
                **{
                    name: token_for(User.objects.get(username=name))
                    for name in ("dev", "olivia", "sam")
                },
            }
        finally:
            celery_app.conf.task_always_eager = False


def test_request_approve_get_and_kubeconfig_end_to_end(live):
    def run(person: str, *args: str) -> subprocess.CompletedProcess:
        return berth(*args, token=live[person], url=live["url"], home=live["home"])

    asked = run(
        "dev",
        "request",
        "namespace",
        "--app",
        "cli",
        "--tier",
        "staging",
        "--cluster",
        "sandbox",
        "--cpu",
        "500m",
        "--memory",
        "512Mi",
    )
    assert asked.returncode == 0, asked.stderr
    created = Request.objects.get(payload__app="cli")
    assert f"Request #{created.pk} (namespace): submitted" in asked.stdout

    # Deciding one's own request is refused: the API's problem detail, exit code 1.
    own = run("dev", "approve", str(created.pk), "--reason", "mine")
    assert own.returncode == 1
    assert "403" in own.stderr and "You may not do this" in own.stderr

    approved = run("olivia", "approve", str(created.pk), "--reason", "looks right")
    assert approved.returncode == 0, approved.stderr
    created.refresh_from_db()
    assert created.state == "ready", created.status_message

    listed = run("dev", "get", "requests", "-o", "json")
    assert {"id": created.pk, "state": "ready"}.items() <= next(
        r for r in json.loads(listed.stdout) if r["id"] == created.pk
    ).items()
    table = run("dev", "get", "namespaces")
    assert "payments-cli-staging" in table.stdout and "active" in table.stdout
    as_yaml = yaml.safe_load(run("dev", "get", "namespaces", "-o", "yaml").stdout)
    assert "payments-cli-staging" in {row["name"] for row in as_yaml}

    config = run("dev", "kubeconfig", "payments-cli-staging")
    assert config.returncode == 0, config.stderr
    kube = yaml.safe_load(config.stdout)
    assert kube["clusters"][0]["cluster"]["server"] == live["sandbox"].url
    assert kube["contexts"][0]["context"]["namespace"] == "payments-cli-staging"
    assert "kubectl auth can-i --list -n payments-cli-staging" in config.stderr

    outsider = run("sam", "kubeconfig", "payments-cli-staging")
    assert outsider.returncode == 1 and "404" in outsider.stderr
    assert outsider.stdout == ""


def test_an_environment_is_created_waited_for_until_ready_and_deleted(live):
    def run(*args: str) -> subprocess.CompletedProcess:
        return berth(*args, token=live["dev"], url=live["url"], home=live["home"])

    created = run(
        "env",
        "create",
        "--project",
        "shop",
        "--slug",
        "pr-42",
        "--branch",
        "feature/x",
        "--ttl",
        "4h",
        "--wait",
        "--interval",
        "0.1",
    )

    assert created.returncode == 0, created.stderr
    namespace = created.stdout.strip()
    assert namespace.startswith("payments-shop-") and "pr-42" in namespace
    assert live["sandbox"].get("Namespace", namespace) is not None
    (row,) = [
        e
        for e in json.loads(run("get", "environments", "-o", "json").stdout)
        if e["env_slug"] == "pr-42"
    ]
    assert row["state"] == "live"

    deleted = run("env", "delete", "--project", "shop", "--slug", "pr-42")
    assert deleted.returncode == 0, deleted.stderr
    assert "Environment shop/pr-42: end" in deleted.stdout


def test_wait_exits_non_zero_when_the_environment_is_refused(live):
    refused = berth(
        "env",
        "create",
        "--project",
        "shop",
        "--slug",
        "pr-43",
        "--ttl",
        "999d",
        "--wait",
        token=live["dev"],
        url=live["url"],
        home=live["home"],
    )

    assert refused.returncode == 1
    assert "400" in refused.stderr and "ttl" in refused.stderr


def test_login_keeps_a_checked_token_and_refuses_a_wrong_one(live):
    home = live["home"]
    wrong = berth("login", "--token", "berth_wrong", url=live["url"], home=home)
    assert wrong.returncode == 1 and "401" in wrong.stderr
    assert not (home / "config" / "berth" / "config.toml").exists()

    kept = berth("login", "--token", live["dev"], url=live["url"], home=home)
    assert kept.returncode == 0, kept.stderr
    saved = home / "config" / "berth" / "config.toml"
    assert tomllib.loads(saved.read_text()) == {"url": live["url"], "token": live["dev"]}
    assert saved.stat().st_mode & 0o077 == 0
    # Later commands need neither BERTH_URL nor BERTH_TOKEN.
    assert berth("get", "requests", "-o", "json", home=home).returncode == 0


# --- berth token --exec ----------------------------------------------------------------------


def test_token_exec_prints_an_exec_credential_from_the_cached_id_token(tmp_path):
    from berth_cli.oidc import cache_file

    expires = int(time.time()) + 3600
    id_token = jwt.encode({"iss": ISSUER, "sub": "dev", "exp": expires}, "k" * 32)
    cached = cache_file(ISSUER, "kubernetes", cache_home=tmp_path / "cache")
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps({"id_token": id_token}))

    shown = berth(
        "token",
        "--exec",
        f"--oidc-issuer-url={ISSUER}",
        "--oidc-client-id=kubernetes",
        home=tmp_path,
    )

    assert shown.returncode == 0, shown.stderr
    credential = json.loads(shown.stdout)
    assert credential["apiVersion"] == "client.authentication.k8s.io/v1"
    assert credential["kind"] == "ExecCredential"
    assert credential["status"]["token"] == id_token
    assert credential["status"]["expirationTimestamp"] == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires)
    )


def test_token_exec_says_so_when_the_provider_offers_no_device_sign_in(tmp_path):
    (tmp_path / "idp").mkdir()
    with running_dev_idp(
        berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp", env=dict(os.environ)
    ) as issuer:
        refused = berth(
            "token",
            "--exec",
            f"--oidc-issuer-url={issuer}",
            "--oidc-client-id=berth-test",
            home=tmp_path,
        )

    assert refused.returncode == 1
    assert "does not offer the device authorization grant" in refused.stderr
    assert "kubelogin" in refused.stderr
    assert refused.stdout == ""


# --- docs/automation.md's recipes ------------------------------------------------------------


def recipe_commands() -> list[str]:
    """The berth commands docs/automation.md's recipes run, each once, in order."""
    text = (ROOT / "docs" / "automation.md").read_text()
    found: list[str] = []
    for line in text.splitlines():
        command = line.strip().removeprefix("- ").removeprefix("run: ").strip()
        if command.startswith("berth env ") and command not in found:
            found.append(command)
    return found


def test_the_ci_recipes_run_as_written_against_a_live_berth(live):
    commands = recipe_commands()
    assert [c.split()[2] for c in commands] == ["create", "delete"]  # one of each, everywhere
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_"))},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "BERTH_URL": live["url"],
        "BERTH_TOKEN": live["dev"],
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(live["home"] / "config"),
        "TENANT": "payments",
        "PROJECT": "shop",
        "PR": "7",
        "BRANCH": "feature/seven",
    }

    def sh(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", command],
            env=environment,
            cwd=live["home"],
            capture_output=True,
            text=True,
            timeout=120,
        )

    created = sh(commands[0])
    assert created.returncode == 0, created.stderr
    namespace = created.stdout.strip()
    assert live["sandbox"].get("Namespace", namespace) is not None
    again = sh(commands[0])
    assert again.returncode == 1, again.stdout  # the page says a second create is refused
    deleted = sh(commands[1])
    assert deleted.returncode == 0, deleted.stderr
    assert sh(commands[1]).returncode == 0  # a retried closing job is harmless
    environment_row = json.loads(sh("berth get environments -o json").stdout)
    assert {row["state"] for row in environment_row if row["env_slug"] == "pr-7"} <= {
        "ending",
        "ended",
    }


# --- from Ready to kubectl, as oneself -------------------------------------------------------


def test_kubectl_with_berths_kubeconfig_is_answered_for_the_person_themselves(
    live_server, settings, tmp_path
):
    """The README's promise: a namespace Ready, `berth kubeconfig`, and `kubectl get pods`
    answered by the stand-in for `dev` as `dev` (an ID token of the development provider,
    handed to kubectl by `berth token --exec` from its cache)."""
    import base64
    import shutil

    from berth_cli.oidc import cache_file
    from kubesandbox.authn import OidcOptions
    from portal.celery import app as celery_app
    from portal.sandbox import OIDC_USERNAME_PREFIX
    from tests.kubesandbox.test_oidc import id_token_of
    from tests.support.oidc_provider import CLIENT_ID

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    (tmp_path / "idp").mkdir()
    with running_dev_idp(
        berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp", env=dict(os.environ)
    ) as issuer:
        options = OidcOptions(
            issuer_url=issuer,
            client_id=CLIENT_ID,
            username_prefix=OIDC_USERNAME_PREFIX,
            groups_claim="groups",
        )
        with KubeSandbox(
            tls=True,
            oidc=options,
            crds=upstream_crds(),
            namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES),
        ) as sandbox:
            ca = base64.b64decode(
                sandbox.kubeconfig()["clusters"][0]["cluster"]["certificate-authority-data"]
            ).decode()
            seed_demo(sandbox, guardrails=True, sandbox_ca=ca)
            settings.KUBE_OIDC_ISSUER_URL = issuer
            settings.KUBE_OIDC_CLIENT_ID = CLIENT_ID
            settings.BERTH_API_RATE = "100000/min"
            celery_app.conf.task_always_eager = True
            try:
                token = token_for(User.objects.get(username="dev"))
                asked = berth(
                    "request",
                    "namespace",
                    "--app",
                    "kube",
                    "--tier",
                    "dev",
                    "--cluster",
                    "sandbox",
                    "--cpu",
                    "500m",
                    "--memory",
                    "512Mi",
                    token=token,
                    url=live_server.url,
                    home=tmp_path,
                )
                assert asked.returncode == 0, asked.stderr
                assert Request.objects.get(payload__app="kube").state == "ready"
                kubeconfig = tmp_path / "kube.kubeconfig"
                got = berth(
                    "kubeconfig",
                    "payments-kube-dev",
                    "--credentials",
                    "berth",
                    "-o",
                    str(kubeconfig),
                    token=token,
                    url=live_server.url,
                    home=tmp_path,
                )
                assert got.returncode == 0, got.stderr
            finally:
                celery_app.conf.task_always_eager = False
            # dev has signed in before: kubectl's plugin finds the ID token in its cache.
            cached = cache_file(issuer, CLIENT_ID, cache_home=tmp_path / "cache")
            cached.parent.mkdir(parents=True)
            cached.write_text(json.dumps({"id_token": id_token_of(issuer, "dev")}))
            environment = {
                **{k: v for k, v in os.environ.items() if not k.startswith("BERTH_")},
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "KUBECONFIG": str(kubeconfig),
                "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "HOME": str(tmp_path),
            }

            def kubectl_says(*args: str) -> subprocess.CompletedProcess:
                return subprocess.run(
                    [kubectl, *args], env=environment, capture_output=True, text=True, timeout=60
                )

            pods = kubectl_says("get", "pods", "-n", "payments-kube-dev")
            assert pods.returncode == 0, pods.stderr
            assert "No resources found in payments-kube-dev namespace." in pods.stderr
            whoami = kubectl_says("auth", "whoami", "-o", "json")
            assert whoami.returncode == 0, whoami.stderr
            user = json.loads(whoami.stdout)["status"]["userInfo"]
            assert user["username"] == "oidc:devidp-dev" and "payments-devs" in user["groups"]
            assert kubectl_says("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
            assert kubectl_says("auth", "can-i", "create", "rolebindings").stdout.strip() == "no"
