"""A request page left open follows its request from submission to Ready without a reload:
the header's state and status line, the decisions, the history and the actions offered all
come with the page's one poll, which stops once the request has arrived."""

import re

import pytest
from playwright.sync_api import expect

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from provisioning import reconcile
from tenants import services
from tenants.models import Tenant, User
from tests.support.browser import needs_chromium, screenshot, signed_in_page
from tests.support.cluster import seed_demo
from tests.support.workflow import ask_for_namespace

pytestmark = [pytest.mark.browser, needs_chromium]

# Generous: the page asks every second, on a machine that may be busy.
NEWS = 30_000


@pytest.fixture
def sandbox():
    # The demo's payments tenant is an Argo CD one: its AppProject is a custom resource.
    with KubeSandbox(
        namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES), crds=upstream_crds("argocd")
    ) as running:
        yield running


@pytest.mark.django_db(transaction=True)
def test_an_open_request_page_follows_approval_and_provisioning_to_ready(
    live_server, browser, sandbox
):
    seed_demo(sandbox)
    developer_user = User.objects.get(username="dev")
    tenancy_request = ask_for_namespace(
        Tenant.objects.get(slug="payments"),
        developer_user,
        app="shop",
        tier="prod",
        cpu="1",
        memory="1Gi",
    )
    url = f"{live_server.url}/requests/{tenancy_request.pk}/"
    developer = signed_in_page(browser, live_server, developer_user)
    admin = signed_in_page(browser, live_server, User.objects.get(username="pat"))

    developer.goto(url)
    state = developer.locator("#request-header [data-testid=request-state]")
    expect(state).to_have_text("Awaiting approval")
    expect(developer.locator("#request-status")).to_contain_text("Awaiting approval: 0 of 1")
    cancel = developer.get_by_role("button", name="Cancel this request")
    expect(cancel).to_be_visible()
    # Anything a reload would lose: still here at the end means the page was never reloaded.
    developer.evaluate("window.openedOnce = true")

    # The admin starts typing a reason; news arriving meanwhile does not wipe it.
    admin.goto(url)
    admin.fill("#id_reason", "Half a reason")
    services.add_comment(
        request_id=tenancy_request.pk, author=developer_user, body="Needed for the launch."
    )
    admin.locator("#history li", has_text="commented").wait_for(timeout=NEWS)
    expect(admin.locator("#id_reason")).to_have_value("Half a reason")

    admin.click("#approve-button")
    expect(admin.locator(".message-success")).to_be_visible()

    # The developer's page hears of the decision by itself...
    expect(state).to_have_text("Approved", timeout=NEWS)
    expect(cancel).to_have_count(0)
    # ...and, once a worker has provisioned the request, that it is ready.
    reconcile.converge(request_id=tenancy_request.pk, worker="browser-test")
    expect(state).to_have_text("Ready", timeout=NEWS)

    header = developer.locator("#request-header")
    expect(header.locator("[data-testid=decisions]")).to_contain_text("Approved by Pat Platform")
    expect(header).not_to_contain_text("Awaiting approval")
    history = developer.locator("#history li")
    for entry in (
        "submitted the request",
        "commented",
        "approved the request",
        "started provisioning",
        "finished provisioning: ready",
    ):
        expect(history.filter(has_text=entry)).to_have_count(1)
    expect(developer.get_by_role("button", name="Cancel this request")).to_have_count(0)
    expect(developer.locator("#progress .created a")).to_have_text("payments-shop-prod")
    # Arrived: the page stops asking.
    expect(developer.locator("#progress")).not_to_have_attribute("data-poll", re.compile(""))
    assert developer.evaluate("window.openedOnce") is True
    screenshot(developer, "request-live-ready")
