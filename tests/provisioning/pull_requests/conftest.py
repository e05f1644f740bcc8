"""Merge-request mode's world: the Kubernetes API stand-in with the demo seeded on it, and
the payments tenant's repository on the forge stand-in (GitHub's REST API, every request
and answer checked against GitHub's OpenAPI description) over the project's git server;
a pull request opened in it, and the forge's webhooks caught (`hooked`). tests/security
takes the same world for what Berth believes of the forge."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgesandbox import ForgeSandbox
from tenants.choices import RequestState
from tenants.models import Cluster, Request, Tenant, User
from tests.forgesandbox.conftest import (  # noqa: F401 - fixtures
    HookReceiver,
    Received,
    github_openapi,
    hook_receiver,
)
from tests.provisioning.conftest import sandbox  # noqa: F401 - fixture
from tests.support.cluster import seed_demo
from tests.support.forges import forge_over_git, github_client
from tests.support.gitops_loop import approved_namespace, work

TOKEN = "ghp_berthmergerequestmode00000000000"
REPO = "acme/gitops"
HOOK_SECRET = "forge-hook-Secr3t"


@pytest.fixture
def forge(tmp_path: Path, github_openapi: None):  # noqa: F811 - the fixture above
    with forge_over_git(tmp_path, token=TOKEN, repo=REPO, validate=True, reviewer="rita") as f:
        yield f
        f.assert_valid_responses()


@pytest.fixture
def plain_forge(tmp_path: Path):
    """The forge for its GitLab and Gitea routes, which need no OpenAPI description."""
    with forge_over_git(tmp_path, token=TOKEN, repo=REPO, validate=False, reviewer="rita") as f:
        yield f


@pytest.fixture
def forge_world(db, sandbox, forge, settings):  # noqa: F811 - the fixture above
    """payments in merge-request mode for every tier, its forge the stand-in."""
    return world_on(sandbox, forge, settings)


def world_on(
    cluster, forge: ForgeSandbox, settings, *, kind: str = "github", api_url: str = ""
) -> dict:
    """The demo seeded, payments in merge-request mode on `forge` as a forge of `kind`."""
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    seed_demo(cluster)
    tenant = Tenant.objects.get(slug="payments")
    tenant.forge_kind = kind
    return {
        "tenant": in_merge_request_mode(tenant, forge, api_url=api_url),
        "forge": forge,
        "owner": User.objects.get(username="olivia"),
        "admin": User.objects.get(username="pat"),
        "cluster": Cluster.objects.get(name="sandbox"),
    }


def in_merge_request_mode(tenant: Tenant, forge: ForgeSandbox, *, api_url: str = "") -> Tenant:
    """The tenant's repository on the forge, its changes through pull requests there."""
    tenant.gitops_repo_url = forge.clone_url(REPO)
    tenant.gitops_credentials = TOKEN
    tenant.changes_by_pull_request = True
    tenant.forge_api_url = api_url or forge.api_url
    tenant.forge_token = TOKEN
    tenant.forge_webhook_secret = HOOK_SECRET
    tenant.full_clean()
    tenant.save()
    return tenant


def opened(forge_world, app: str = "shop", tier: str = "dev") -> Request:
    """A namespace approved and taken by the worker: its pull request is open."""
    approved_namespace(forge_world, app, tier)
    (waiting,) = work()
    assert waiting.state == RequestState.AWAITING_MERGE, waiting.status_message
    return waiting


HOOK_PATH = "/tenants/payments/forge-hook/"


@pytest.fixture
def hooked(forge_world, hook_receiver: HookReceiver):  # noqa: F811 - the fixture imported above
    """The forge posts its pull_request events, signed with the tenant's secret, to a
    receiver; the tests hand them to Berth as they came."""
    client = github_client(forge_world["forge"], TOKEN)
    client.get_repo(REPO).create_hook(
        "web",
        {"url": hook_receiver.url, "content_type": "json", "secret": HOOK_SECRET},
        events=["pull_request"],
        active=True,
    )
    client.close()
    return hook_receiver


def closed_event(forge_world, receiver: HookReceiver) -> Received:
    forge_world["forge"].deliveries()  # wait for them
    (closed,) = [e for e in receiver.events("pull_request") if e.payload["action"] == "closed"]
    return closed
