"""`make run`'s forge, set up by `manage.py seed_demo_forge`: payments in merge-request mode
on demo/payments, whose webhook delivers to Berth's receiver (`make run`'s web server,
`BERTH_HOST`:`BERTH_PORT`) signed with the tenant's secret, one hook however often it runs
and wherever Berth moved; and payments' commit links, in the forge's nested
`demo/payments.git`, lead to the demo git server's commit page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
import requests
from django.core.management import call_command

from forgesandbox import ForgeSandbox
from portal.gitserver import GitHttpServer
from tenants.models import Tenant
from tenants.services.pull_requests import signed
from tests.forgesandbox.conftest import HookReceiver, hook_receiver  # noqa: F401 - fixture

TOKEN = "ghp_demoforgeseedtoken0000000000000000"
REPOSITORY = "demo/payments"
HOOK_PATH = "/tenants/payments/forge-hook/"


@pytest.fixture
def demo_forge(tmp_path: Path, monkeypatch) -> Iterator[tuple[ForgeSandbox, GitHttpServer]]:
    """As `make run` starts them: the demo git server over data/git/, the forge (no
    OpenAPI checks) over the same directory with demo/payments, its user an admin."""
    root = tmp_path / "git"
    root.mkdir()
    monkeypatch.setenv("BERTH_DEMO_FORGE_TOKEN", TOKEN)
    with (
        GitHttpServer(root) as git_server,
        ForgeSandbox(root, git_url=git_server.base_url, token=TOKEN, validate=False) as forge,
    ):
        forge.create_repo(REPOSITORY)
        forge.grant(REPOSITORY, forge.user, "admin")
        yield forge, git_server


def seed(forge: ForgeSandbox, git_server: GitHttpServer, monkeypatch, berth: str) -> str:
    """seed_demo_forge with Berth's web server at `berth` (host:port); what it said."""
    host, port = berth.rsplit(":", 1)
    monkeypatch.setenv("BERTH_HOST", host)
    monkeypatch.setenv("BERTH_PORT", port)
    said = StringIO()
    call_command(
        "seed_demo_forge",
        f"--api-url={forge.api_url}",
        f"--git-url={git_server.base_url}",
        stdout=said,
    )
    return said.getvalue()


def test_the_seed_points_one_webhook_at_berths_receiver_signed_with_the_tenants_secret(
    demo_world,
    demo_forge,
    monkeypatch,
    hook_receiver: HookReceiver,  # noqa: F811
):
    forge, git_server = demo_forge
    berth = hook_receiver.url.split("/")[2]  # the receiver stands in for Berth's web server

    said = seed(forge, git_server, monkeypatch, berth)

    tenant = Tenant.objects.get(slug="payments")
    (hook,) = forge.repo(REPOSITORY).hooks.values()
    assert hook.url == f"http://{berth}{HOOK_PATH}"
    assert (hook.events, hook.content_type, hook.active) == (["pull_request"], "json", True)
    assert tenant.forge_webhook_secret and hook.secret == tenant.forge_webhook_secret
    assert f"webhook on {REPOSITORY} made, delivering to http://{berth}{HOOK_PATH}" in said
    # GitHub's hello reached the receiver, signed as Berth checks it.
    (ping,) = forge.deliveries("ping")
    assert ping.status == 204
    (received,) = hook_receiver.received
    assert received.headers["X-GitHub-Event"] == "ping"
    assert signed(
        tenant.forge_webhook_secret, received.body, received.headers["X-Hub-Signature-256"]
    )
    assert json.loads(received.body)["hook_id"] == hook.id


def test_run_again_it_keeps_the_hook_and_secret_and_follows_berth_to_a_new_port(
    demo_world,
    demo_forge,
    monkeypatch,
    hook_receiver: HookReceiver,  # noqa: F811
):
    forge, git_server = demo_forge
    seed(forge, git_server, monkeypatch, "127.0.0.1:9")
    secret = Tenant.objects.get(slug="payments").forge_webhook_secret
    (first,) = forge.repo(REPOSITORY).hooks.values()

    again = seed(forge, git_server, monkeypatch, "127.0.0.1:9")
    berth = hook_receiver.url.split("/")[2]
    moved = seed(forge, git_server, monkeypatch, berth)

    assert f"webhook on {REPOSITORY} kept at http://127.0.0.1:9{HOOK_PATH}" in again
    assert f"webhook on {REPOSITORY} moved to http://{berth}{HOOK_PATH}" in moved
    (hook,) = forge.repo(REPOSITORY).hooks.values()
    assert hook.id == first.id and hook.url == f"http://{berth}{HOOK_PATH}"
    assert Tenant.objects.get(slug="payments").forge_webhook_secret == secret == hook.secret
    # A merge on the review page reaches the moved hook, signed with the same secret.
    forge.push_commit(REPOSITORY, "berth/request-1", {"apps/web.yaml": "replicas: 2\n"})
    forge.forge.open_pull(
        forge.repo(REPOSITORY),
        forge.user,
        head="berth/request-1",
        base="main",
        title="payments-web-prod",
        body=None,
        draft=False,
    )
    forge.merge_as_reviewer(REPOSITORY, 1)
    forge.deliveries()
    (merged,) = hook_receiver.events("pull_request")
    assert merged.payload["pull_request"]["merged"] is True
    assert signed(secret, merged.body, merged.headers["X-Hub-Signature-256"])


def test_a_second_hook_for_berths_receiver_is_removed(demo_world, demo_forge, monkeypatch):
    forge, git_server = demo_forge
    repo = forge.repo(REPOSITORY)
    for port in (1, 2):
        forge.forge.add_hook(
            repo,
            url=f"http://127.0.0.1:{port}{HOOK_PATH}",
            content_type="json",
            secret=None,
            insecure_ssl="0",
            events=["push"],
            active=False,
        )
    other = forge.forge.add_hook(
        repo,
        url="http://ci.example/hook",
        content_type="json",
        secret=None,
        insecure_ssl="0",
        events=["push"],
        active=True,
    )

    seed(forge, git_server, monkeypatch, "127.0.0.1:9")

    urls = sorted(h.url for h in repo.hooks.values())
    assert urls == [f"http://127.0.0.1:9{HOOK_PATH}", "http://ci.example/hook"]
    assert repo.hooks[other.id].events == ["push"]  # someone else's hook is left alone


def test_without_the_forge_the_tenant_is_set_and_the_seed_says_there_is_no_webhook(
    demo_world, monkeypatch, tmp_path
):
    monkeypatch.setenv("BERTH_DEMO_FORGE_TOKEN", TOKEN)
    err = StringIO()

    call_command(
        "seed_demo_forge",
        "--api-url=http://127.0.0.1:9/api/v3",
        "--git-url=http://127.0.0.1:9",
        stdout=StringIO(),
        stderr=err,
    )

    assert f"payments: no webhook on {REPOSITORY}" in err.getvalue()
    assert Tenant.objects.get(slug="payments").changes_by_pull_request is True


def test_payments_commit_links_in_the_forges_repository_lead_to_the_commit_page(
    demo_world, demo_forge, monkeypatch
):
    forge, git_server = demo_forge
    seed(forge, git_server, monkeypatch, "127.0.0.1:9")
    sha = forge.push_commit(REPOSITORY, "main", {"apps/web.yaml": "replicas: 2\n"}, "Berth writes")

    link = Tenant.objects.get(slug="payments").commit_link(sha)
    page = requests.get(link, timeout=10)

    assert link == f"{git_server.base_url}/{REPOSITORY}.git/commit/{sha}"
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert f"commit {sha}" in page.text and "+replicas: 2" in page.text
