"""The `berth` command end to end, against a live Berth (pytest-django's live_server) whose
cluster is the stand-in and whose worker's jobs run as they are queued (the `live` fixture):
request → approve → get → kubeconfig, an ephemeral environment created with --wait and
deleted, errors as the API's problem details with a non-zero exit (a deploy token for prod), and
`berth login`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tomllib

import pytest
import yaml

from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace, Request, Tenant
from tests.support.berth_cli import berth

# Each test here starts a program (git, kubectl, python): make test-fast leaves them out.
pytestmark = pytest.mark.processes


def berth_as(live, person: str, command: str) -> subprocess.CompletedProcess:
    """`berth <command>` (split as a shell splits it) run by `person`, one of `live`'s people."""
    return berth(*shlex.split(command), token=live[person], url=live["url"], home=live["home"])


def test_request_approve_get_and_kubeconfig_end_to_end(live):
    asked = berth_as(
        live,
        "dev",
        "request namespace --app cli --tier staging --cluster sandbox --cpu 500m --memory 512Mi",
    )
    assert asked.returncode == 0, asked.stderr
    created = Request.objects.get(payload__app="cli")
    assert f"Request #{created.pk} (namespace): submitted" in asked.stdout

    # Deciding one's own request is refused: the API's problem detail, exit code 1.
    own = berth_as(live, "dev", f"approve {created.pk} --reason mine")
    assert own.returncode == 1
    assert "403" in own.stderr and "You may not do this" in own.stderr

    approved = berth_as(live, "olivia", f"approve {created.pk} --reason 'looks right'")
    assert approved.returncode == 0, approved.stderr
    created.refresh_from_db()
    assert created.state == "ready", created.status_message

    listed = berth_as(live, "dev", "get requests -o json")
    assert {"id": created.pk, "state": "ready"}.items() <= next(
        r for r in json.loads(listed.stdout) if r["id"] == created.pk
    ).items()
    table = berth_as(live, "dev", "get namespaces")
    assert "payments-cli-staging" in table.stdout and "active" in table.stdout
    as_yaml = yaml.safe_load(berth_as(live, "dev", "get namespaces -o yaml").stdout)
    assert "payments-cli-staging" in {row["name"] for row in as_yaml}

    config = berth_as(live, "dev", "kubeconfig payments-cli-staging")
    assert config.returncode == 0, config.stderr
    kube = yaml.safe_load(config.stdout)
    assert kube["clusters"][0]["cluster"]["server"] == live["sandbox"].url
    assert kube["contexts"][0]["context"]["namespace"] == "payments-cli-staging"
    assert "kubectl auth can-i --list -n payments-cli-staging" in config.stderr

    outsider = berth_as(live, "sam", "kubeconfig payments-cli-staging")
    assert outsider.returncode == 1 and "404" in outsider.stderr
    assert outsider.stdout == ""


def test_an_environment_is_created_waited_for_until_ready_and_ended(live):
    created = berth_as(
        live,
        "dev",
        "env create --project shop --slug pr-42 --branch feature/x --ttl 4h --wait --interval 0.1",
    )

    assert created.returncode == 0, created.stderr
    namespace = created.stdout.strip()
    assert namespace.startswith("payments-shop-") and "pr-42" in namespace
    assert live["sandbox"].get("Namespace", namespace) is not None
    (row,) = [
        e
        for e in json.loads(berth_as(live, "dev", "get environments -o json").stdout)
        if e["env_slug"] == "pr-42"
    ]
    assert row["state"] == "live"

    ended = berth_as(live, "dev", "env end --project shop --slug pr-42 --wait --interval 0.1")
    assert ended.returncode == 0, ended.stderr
    # Its state when asked (the worker may have ended it already), then "ended" if not.
    assert ended.stdout.splitlines()[-1] == "Environment shop/pr-42: ended"
    assert live["sandbox"].get("Namespace", namespace) is None
    # Its first name still works, and a retried closing job changes nothing.
    again = berth_as(live, "dev", "env delete --project shop --slug pr-42")
    assert again.returncode == 0 and again.stdout == "Environment shop/pr-42: ended\n"


def test_wait_exits_non_zero_when_the_environment_is_refused(live):
    refused = berth_as(live, "dev", "env create --project shop --slug pr-43 --ttl 999d --wait")

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
    refused = berth_as(live, "olivia", "kubeconfig payments-shop-prod --deploy-token")
    assert refused.returncode == 1
    assert "Tier prod does not allow deploy tokens" in refused.stderr
    assert refused.stdout == ""  # no kubeconfig
    too_long = berth(
        "kubeconfig", "payments-shop-prod", "--deploy-token", "--ttl", "90", home=live["home"]
    )
    assert too_long.returncode == 2 and "90 is not in the range 10<=x<=60" in too_long.stderr


def test_a_refused_field_is_named_with_its_reason_in_plain_words(live):
    refused = berth_as(
        live,
        "dev",
        "request namespace --app Not_A_Name --tier dev --cluster sandbox --cpu 500m --memory 512Mi",
    )

    assert refused.returncode == 1
    first, *fields = refused.stderr.strip().splitlines()
    assert first == "400 Your request is not valid"
    assert any(line.strip().startswith("payload.app:") for line in fields), refused.stderr
    assert ".:" not in refused.stderr and "Invalid fields" not in refused.stderr
    assert not Request.objects.filter(payload__app="Not_A_Name").exists()


def test_a_project_promoted_by_kargo_can_be_asked_for_from_the_terminal(live):
    asked = berth_as(
        live,
        "dev",
        "request project --app promo --engine argocd_kargo --cluster sandbox --tiers dev,staging",
    )

    assert asked.returncode == 0, asked.stderr
    assert Request.objects.get(payload__app="promo").payload["engine"] == "argocd_kargo"
