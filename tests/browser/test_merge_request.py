"""A request page left open while its change waits for a reviewer on the forge: it says
"Awaiting merge" with the pull request's link, and once the forge's merge is heard, it
follows the request to Ready without a reload. (The forge stand-in answers as GitHub does,
every request and answer checked against GitHub's OpenAPI description.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from provisioning import reconcile
from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants.choices import RequestState
from tenants.models import PullRequest, Request, Tenant, User
from tests.provisioning.pull_requests.conftest import (  # noqa: F401 - fixtures
    REPO,
    forge,
    github_openapi,
    in_merge_request_mode,
)
from tests.support.browser import docs_screenshot, needs_chromium, signed_in_page
from tests.support.cluster import seed_demo
from tests.support.workflow import approve_if_needed, ask_for_namespace

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.processes]

NEWS = 30_000  # the page asks every second, on a machine that may be busy


@pytest.fixture
def sandbox():
    with KubeSandbox(
        namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES), crds=upstream_crds("argocd")
    ) as running:
        yield running


@pytest.mark.django_db(transaction=True)
def test_a_request_awaiting_merge_shows_its_pull_request_and_follows_the_merge_to_ready(
    live_server,
    browser,
    sandbox,
    forge,  # noqa: F811 - the fixture imported above
    settings,
):
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    seed_demo(sandbox)
    tenant = in_merge_request_mode(Tenant.objects.get(slug="payments"), forge)
    owner = User.objects.get(username="olivia")
    asked = ask_for_namespace(tenant, owner, app="shop", tier="prod", cpu="1", memory="1Gi")
    approve_if_needed(asked, approver=User.objects.get(username="pat"))
    reconcile.converge(request_id=asked.pk, worker="browser-test")
    assert Request.objects.get(pk=asked.pk).state == RequestState.AWAITING_MERGE
    pull = PullRequest.objects.get(request=asked)

    page = signed_in_page(browser, live_server, owner)
    page.goto(f"{live_server.url}/requests/{asked.pk}/")
    state = page.locator("#request-header [data-testid=request-state]")
    expect(state).to_have_text("Awaiting merge")
    link = page.locator("[data-testid=pull-request] a")
    expect(link).to_have_text(f"{REPO}#1")
    expect(link).to_have_attribute("href", pull.url)
    expect(page.locator("[data-testid=pull-request]")).to_contain_text(
        f"from berth/request-{asked.pk} into main"
    )
    expect(page.locator("#request-status")).to_contain_text("opened for review")
    docs_screenshot(page, "request-awaiting-merge")
    page.evaluate("window.openedOnce = true")

    forge.merge_as_reviewer(REPO, 1, "rita")
    assert poll_pull_requests() == {asked.pk: "merged"}
    reconcile.converge(request_id=asked.pk, worker="browser-test")

    expect(state).to_have_text("Ready", timeout=NEWS)
    expect(page.locator("[data-testid=pull-request]")).to_contain_text("Merged by rita")
    assert page.evaluate("window.openedOnce") is True
