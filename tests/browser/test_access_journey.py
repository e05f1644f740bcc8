"""Access on request in headless Chromium: sam (of search) asks for a role on a payments
namespace on the form, payments' owner approves it on its request page, sam's grant is
active and its page hands him the kubeconfig ("Use it"); once its time is up the grant
says so and the kubeconfig is gone. docs/screenshots/access-request.png and
access-grant.png come from here (`make screenshots`)."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from playwright.sync_api import expect

from tenants.choices import NamespaceState, RequestState
from tenants.models import AccessGrant, Namespace, Request
from tests.support.browser import (
    docs_screenshot,
    needs_chromium,
    screenshot,
    serious_violations,
    signed_in_page,
)
from tests.support.workflow import approve_if_needed, ask_for_namespace

pytestmark = [pytest.mark.browser, needs_chromium]

# One moment, so the docs' pictures (their times included) come out the same on each run.
NOW = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
REASON = "Debug the search results the shop shows: read its pods' logs and events"


@pytest.fixture
def fixed_clock():
    with time_machine.travel(NOW, tick=True):
        yield


@pytest.mark.django_db(transaction=True)
def test_sam_asks_payments_for_access_uses_it_and_it_ends(
    live_server, browser, fixed_clock, demo_world, settings
):
    settings.KUBE_OIDC_ISSUER_URL = "http://127.0.0.1:8001/"
    settings.KUBE_OIDC_CLIENT_ID = "kubernetes"
    made = approve_if_needed(
        ask_for_namespace(demo_world["tenant"], demo_world["developer"], app="shop"),
        approver=demo_world["admin"],
    )
    # Live, as a worker leaves it (the demo's cluster does not answer here).
    Namespace.objects.filter(request=made).update(state=NamespaceState.ACTIVE)
    Request.objects.filter(pk=made.pk).update(state=RequestState.READY)
    name = Namespace.objects.get(request=made).name

    sam = signed_in_page(browser, live_server, demo_world["outsider"])
    sam.goto(f"{live_server.url}/access/grants/new/?namespace={name}")
    expect(sam.locator("h1")).to_have_text(f"Ask for access to {name}")
    sam.select_option("#id_role", "member")
    sam.select_option("#id_duration", "2h")
    # Too short a reason: said on its field, the choices kept.
    sam.fill("#id_reason", "x")
    sam.click("#access-form button[type=submit]")
    expect(sam.locator(".field-error")).to_contain_text("Say why you need it")
    expect(sam.locator("#id_duration")).to_have_value("2h")
    expect(sam.locator("#id_role")).to_have_value("member")
    assert serious_violations(sam) == []
    screenshot(sam, "access-1-refused")

    sam.goto(f"{live_server.url}/access/grants/new/?namespace={name}")
    sam.select_option("#id_role", "member")
    sam.select_option("#id_duration", "1h")
    sam.fill("#id_reason", REASON)
    assert serious_violations(sam) == []
    docs_screenshot(sam, "access-request")
    sam.click("#access-form button[type=submit]")
    expect(sam.locator("h1 [data-grant-state]")).to_have_text("pending")
    grant = AccessGrant.objects.get()
    assert sam.url.endswith(f"/access/grants/{grant.pk}/")
    assert serious_violations(sam) == []
    screenshot(sam, "access-2-pending")

    owner = signed_in_page(browser, live_server, demo_world["owner"])
    owner.goto(f"{live_server.url}/access/grants/{grant.pk}/")
    owner.click(f"#grant >> text=request #{grant.request_id}")
    expect(owner.locator("#request-header")).to_contain_text("Awaiting approval")
    expect(owner.locator("body")).to_contain_text("oidc:devidp-sam")  # the plan's subject
    screenshot(owner, "access-3-request")
    owner.click("#approve-button")
    expect(owner.locator(".message-success")).to_be_visible()
    # The engine binds it (no cluster here: as a worker leaves the request).
    Request.objects.filter(pk=grant.request_id).update(state=RequestState.READY)

    sam.reload()
    expect(sam.locator("h1 [data-grant-state]")).to_have_text("active")
    expect(sam.locator("#use-it h2")).to_have_text("Use it")
    expect(sam.locator("#use-it")).to_contain_text(f"access grant #{grant.pk}")
    download = f"/access/grants/{grant.pk}/kubeconfig.yaml"
    expect(sam.locator("#kubeconfig-download")).to_have_attribute(
        "href", f"{download}?credentials=kubelogin"
    )
    kubeconfig = sam.request.get(f"{live_server.url}{download}")
    assert kubeconfig.status == 200 and f"namespace: {name}" in kubeconfig.text()
    assert serious_violations(sam) == []
    docs_screenshot(sam, "access-grant")
    screenshot(sam, "access-4-active")

    owner.goto(f"{live_server.url}/namespaces/{Namespace.objects.get(name=name).pk}/")
    expect(owner.locator(f"#access-grants [data-grant='{grant.pk}']")).to_contain_text(REASON)
    owner.goto(f"{live_server.url}/access/grants/?state=active")
    expect(owner.locator(f"#access-grants [data-grant='{grant.pk}']")).to_be_visible()
    assert serious_violations(owner) == []
    screenshot(owner, "access-5-list")

    # Its hour passes (the server runs in this process: its clock moves too); the watcher
    # would remove the binding at its end.
    grant.refresh_from_db()
    assert grant.expires_at is not None
    with time_machine.travel(grant.expires_at + timedelta(seconds=5), tick=True):
        sam.reload()
        expect(sam.locator("h1 [data-grant-state]")).to_have_text("expired")
        expect(sam.locator("#use-it")).to_have_count(0)
        expect(sam.locator("#grant-ended")).to_be_visible()
        assert sam.request.get(f"{live_server.url}{download}").status == 404
        screenshot(sam, "access-6-expired")
