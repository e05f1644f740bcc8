from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tenants.models import Project, Tenant, User
from tests.support.api import token_for
from tests.support.berth_cli import ISSUER
from tests.support.cluster import ca_of, seed_demo, stand_in


@contextmanager
def live_berth(live_server, settings, tmp_path, *, fenced: bool) -> Iterator[dict]:
    """A live Berth (pytest-django's live_server) whose cluster is the stand-in, seeded with
    the demo and a `shop` project of payments, whose worker's jobs run as they are queued.
    Yields its URL, the sandbox, a home directory and API tokens of dev, olivia and sam.

    `fenced`: the stand-in serves TLS (kubectl sends a bearer token only over https), knows
    nobody without a token, and has Berth's guardrails and tenant roles installed, as a
    cluster a pipeline deploys to does."""
    from portal.celery import app as celery_app

    settings.KUBE_OIDC_ISSUER_URL = ISSUER
    settings.KUBE_OIDC_CLIENT_ID = "kubernetes"
    settings.BERTH_API_RATE = "100000/min"
    options = {"tls": True, "anonymous_user": None} if fenced else {}
    with stand_in(**options) as sandbox:
        if fenced:
            seed_demo(sandbox, guardrails=True, sandbox_ca=ca_of(sandbox))
        else:
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


@pytest.fixture
def live(live_server, settings, tmp_path):
    with live_berth(live_server, settings, tmp_path, fenced=False) as running:
        yield running


@pytest.fixture
def fenced_live(live_server, settings, tmp_path):
    with live_berth(live_server, settings, tmp_path, fenced=True) as running:
        yield running
