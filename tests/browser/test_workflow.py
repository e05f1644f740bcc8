"""The request → approval → provisioning workflow as people see it, in headless Chromium."""

import re
from datetime import timedelta

import pytest

from provisioning import reconcile
from tenants.models import Namespace, Request, User
from tests.support.browser import needs_chromium, screenshot, signed_in_page
from tests.support.cluster import seed_demo, stand_in

pytestmark = [pytest.mark.browser, needs_chromium]

LONG_APP = "quarterly-revenue-reconciliation-service-for-europe"


@pytest.fixture
def sandbox():
    with stand_in() as running:
        yield running


@pytest.mark.django_db(transaction=True)
def test_request_is_named_before_submit_approved_from_the_queue_and_seen_live(
    live_server, browser, sandbox
):
    seed_demo(sandbox)
    developer = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    admin = signed_in_page(browser, live_server, User.objects.get(username="pat"))
    outsider = signed_in_page(browser, live_server, User.objects.get(username="sam"))

    # The developer types a name too long for a namespace and sees the final name at once.
    developer.goto(f"{live_server.url}/tenants/payments/request/namespace/")
    developer.select_option("#id_tier", "prod")
    developer.fill("#id_app", LONG_APP)
    final = developer.locator("[data-final-name]")
    final.wait_for()
    shown = final.inner_text()
    assert len(shown) <= 63
    assert shown.startswith("payments-quarterly-revenue-reconciliation")
    assert shown.endswith("-prod")
    assert "shortened with a stable hash" in developer.locator("#name-preview").inner_text()
    screenshot(developer, "request-form")

    developer.fill("#id_cpu", "2")
    developer.fill("#id_memory", "4Gi")
    developer.click("form.form button[type=submit]")
    developer.wait_for_url(re.compile(r"/requests/\d+/$"))
    tenancy_request = Request.objects.get()
    assert Namespace.objects.get(request=tenancy_request).name == shown  # as shown, so named
    assert "Awaiting approval" in developer.locator("#progress").inner_text()
    developer.click("summary")  # open the plan's YAML
    screenshot(developer, "plan-preview")

    # Another tenant's developer sees nothing of it.
    outsider.goto(f"{live_server.url}/approvals/")
    assert f"#{tenancy_request.pk}" not in outsider.content()
    response = outsider.goto(f"{live_server.url}/requests/{tenancy_request.pk}/")
    assert response.status == 404
    assert outsider.goto(f"{live_server.url}/tenants/payments/").status == 404

    # The platform admin approves from the queue.
    admin.goto(f"{live_server.url}/approvals/")
    screenshot(admin, "approval-queue")
    admin.click(f"#queue a:text('#{tenancy_request.pk}')")
    admin.click("#approve-button")
    admin.wait_for_selector(".message-success")

    # The developer's open page shows the decision without a reload...
    developer.wait_for_selector("#progress .state-approved", timeout=10_000)
    # ...and, once a worker has provisioned it, that it is ready.
    reconcile.converge(request_id=tenancy_request.pk, worker="browser-test")
    developer.wait_for_selector("#progress .state-ready", timeout=10_000)
    assert "created" in developer.locator("#progress").inner_text()
    screenshot(developer, "request-ready")
    assert sandbox.get("Namespace", shown) is not None


@pytest.mark.django_db(transaction=True)
def test_ephemeral_environment_is_named_before_start_extended_and_ended_from_its_page(
    live_server, browser, sandbox
):
    from tenants.choices import EnvironmentState
    from tenants.models import EphemeralEnvironment, Project, Tenant

    seed_demo(sandbox)
    Project.objects.create(tenant=Tenant.objects.get(slug="payments"), name="checkout")
    developer = signed_in_page(browser, live_server, User.objects.get(username="dev"))

    developer.goto(f"{live_server.url}/tenants/payments/request/ephemeral/")
    developer.fill("#id_env_slug", "review-" + "long-feature-branch-name-" * 3)
    final = developer.locator("[data-final-name]")
    final.wait_for()
    shown = final.inner_text()
    # Its first 50 characters (trailing dash dropped), a dash and 12 hex digits of its hash.
    assert len(shown) <= 63 and shown.startswith("payments-checkout-review-long")
    assert re.fullmatch(r"[0-9a-f]{12}", shown.rsplit("-", 1)[1])
    assert "Its own" in developer.locator("#name-preview").inner_text()
    screenshot(developer, "ephemeral-form")
    developer.fill("#id_ttl", "2h")
    developer.click("form.form button[type=submit]")
    developer.wait_for_load_state()
    environment = EphemeralEnvironment.objects.get()
    assert environment.namespace.name == shown
    reconcile.converge(request_id=environment.request_id, worker="browser-test")
    assert sandbox.get("Namespace", shown) is not None

    developer.goto(f"{live_server.url}/environments/{environment.pk}/")
    developer.fill("#id_ttl", "5h")
    developer.click("button:text-is('Extend')")
    developer.wait_for_selector(".message-success")
    environment.refresh_from_db()
    assert environment.expires_at > environment.created_at + timedelta(hours=4)
    screenshot(developer, "ephemeral-environment")

    developer.click("button:text-is('End now')")
    developer.wait_for_selector(".message-success")
    end = Request.objects.get(kind="end_environment")
    reconcile.converge(request_id=end.pk, worker="browser-test")
    environment.refresh_from_db()
    assert environment.state == EnvironmentState.ENDED
    assert sandbox.get("Namespace", shown) is None
