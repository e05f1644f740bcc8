"""The `berth` command end to end, against a live Berth (pytest-django's live_server) whose
cluster is the stand-in and whose worker's jobs run as they are queued (the `live` fixture):
request → approve → get → kubeconfig, an ephemeral environment created with --wait and
deleted, errors as the API's problem details with a non-zero exit (a deploy token for prod), and
`berth login`.
"""

from __future__ import annotations

import json
import subprocess
import tomllib

import pytest
import yaml

from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace, Request, Tenant
from tests.support.berth_cli import berth

# Each test here starts a program (git, kubectl, python): make test-fast leaves them out.
pytestmark = pytest.mark.processes


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


def test_a_deploy_token_for_prod_is_refused_with_the_apis_reason(live):
    Namespace.objects.create(
        name="payments-shop-prod",
        tenant=Tenant.objects.get(slug="payments"),
        tier=EnvironmentTier.objects.get(slug="prod"),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )
    refused = berth(
        "kubeconfig",
        "payments-shop-prod",
        "--deploy-token",
        token=live["olivia"],
        url=live["url"],
        home=live["home"],
    )
    assert refused.returncode == 1
    assert "Tier prod does not allow deploy tokens" in refused.stderr
    assert refused.stdout == ""  # no kubeconfig
    too_long = berth(
        "kubeconfig", "payments-shop-prod", "--deploy-token", "--ttl", "90", home=live["home"]
    )
    assert too_long.returncode == 2 and "90 is not in the range 10<=x<=60" in too_long.stderr
