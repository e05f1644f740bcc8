"""A person turns one kind of e-mail off on the Notifications page, in headless Chromium,
and is then not e-mailed it, while still hearing about the rest."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.core import mail

from portal.celery import app as celery_app
from tenants import demo, services
from tenants.models import Tenant, User
from tenants.selectors import review
from tests.support.browser import needs_chromium, screenshot, signed_in_page
from tests.support.workflow import ask_for_namespace

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture
def eager_tasks():
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.mark.django_db(transaction=True)
def test_developer_mutes_approvals_and_still_hears_of_rejections(live_server, browser, eager_tasks):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    developer, admin = User.objects.get(username="dev"), User.objects.get(username="pat")
    page = signed_in_page(browser, live_server, developer)

    page.goto(f"{live_server.url}/")
    page.click(".session >> text=Notifications")
    page.uncheck("label:has-text('My request was approved')")
    page.click("#notifications button[type=submit]")
    page.wait_for_selector(".message-success")
    assert "not e-mailed about 1 kind of event" in page.locator(".messages").inner_text()
    assert not page.is_checked("label:has-text('My request was approved')")
    assert page.is_checked("label:has-text('My request was rejected')")
    screenshot(page, "notification-settings")
    serious = [
        v["id"]
        for v in Axe().run(page).response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert serious == []

    tenant = Tenant.objects.get(slug="payments")

    def ask(app: str):
        return ask_for_namespace(tenant, developer, app=app, tier="prod", cpu="1", memory="1Gi")

    approved, rejected = ask("shop"), ask("cart")
    services.approve_request(
        request_id=approved.pk, approver=admin, plan_digest=review(approved).digest
    )
    services.reject_request(request_id=rejected.pk, approver=admin, reason="Use shop")

    to_developer = [m.subject for m in mail.outbox if "dev@example.com" in m.to]
    assert not [s for s in to_developer if s.endswith("approved")], to_developer
    assert f"[Berth] payments: request #{rejected.pk} rejected" in to_developer
