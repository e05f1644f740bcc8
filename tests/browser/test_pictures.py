"""The pictures people read instead of tables, in headless Chromium: a tenant's budget as
bars (in use, requested, left) with the namespaces using most, and the admin dashboard.
The screenshots in docs/ come from here."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from tenants.choices import NamespaceState
from tenants.models import Namespace, Tenant
from tests.support.browser import docs_screenshot, needs_chromium, signed_in_page
from tests.support.timeline import ask, at, provision

pytestmark = [pytest.mark.browser, needs_chromium]

# The pictures are taken at one moment, so the docs' screenshots (dates on the axes
# included) come out the same on every run; the clock ticks on from there.
NOW = datetime(2026, 3, 16, 18, 0, tzinfo=UTC)


# Three of the month's runs fail, each as the engine words it.
PAST_FAILURES = {
    2: "RoleBinding/payments-past2-prod/edit: 403 rolebindings.rbac.authorization.k8s.io is "
    "forbidden",
    5: "Namespace/payments-past5-prod: sandbox: cluster unreachable: connection refused; "
    "gave up after waiting 30 minutes",
    6: "GitOps commit https://git.example/payments.git: repository unreachable: its server "
    "did not answer (the connection failed or timed out); gave up after waiting 30 minutes",
}


@pytest.fixture
def fixed_clock():
    with time_machine.travel(NOW + timedelta(minutes=5), tick=True):
        yield


@pytest.mark.django_db(transaction=True)
def test_tenant_budget_bars_and_admin_dashboard(live_server, browser, fixed_clock, demo_world):
    world = demo_world  # seeded once the clock is fixed
    from tenants import services
    from tenants.selectors import review

    day = NOW - timedelta(days=2)
    for index, app in enumerate(("shop", "cart")):
        made = at(day, lambda app=app: ask(world, app))
        at(
            day + timedelta(hours=index + 1),
            lambda made=made: services.approve_request(
                request_id=made.pk, approver=world["admin"], plan_digest=review(made).digest
            ),
        )
        at(
            day + timedelta(hours=index + 1, seconds=40),
            lambda made=made: provision(made.pk, ready=True),
        )
        Namespace.objects.filter(request=made).update(state=NamespaceState.ACTIVE)
    failed = at(day, lambda: ask(world, "till", tier="dev"))
    at(
        day + timedelta(seconds=20),
        lambda: provision(
            failed.pk,
            ready=False,
            message="Namespace/payments-till-dev: sandbox: cluster "
            "unreachable: connection refused; gave up after waiting 30 minutes",
        ),
    )
    # A month's decisions and runs, for the charts; their namespaces are gone again.
    for index in range(9):
        asked = NOW - timedelta(days=index * 3 + 1, hours=index)
        made = at(asked, lambda index=index: ask(world, f"past{index}"))
        decided = asked + timedelta(minutes=15 + 25 * (index % 4))
        at(
            decided,
            lambda made=made: services.approve_request(
                request_id=made.pk, approver=world["admin"], plan_digest=review(made).digest
            ),
        )
        at(
            decided + timedelta(seconds=25 + 9 * index),
            lambda made=made, index=index: provision(
                made.pk, ready=index not in PAST_FAILURES, message=PAST_FAILURES.get(index, "")
            ),
        )
        Namespace.objects.filter(request=made).update(state=NamespaceState.DECOMMISSIONED)
    waiting = at(timezone.now() - timedelta(hours=3, minutes=1), lambda: ask(world, "search"))

    # A budget this team has half spent, so the picture shows what the bars say.
    Tenant.objects.filter(slug="payments").update(
        budget_cpu_millis=8000, budget_memory_mib=16 * 1024
    )
    developer = signed_in_page(browser, live_server, world["developer"])
    developer.goto(f"{live_server.url}/tenants/payments/")
    budget = developer.locator("#budget")
    assert (
        "in use 2, requested 2, left 4 of 8 cores"
        in budget.locator("#budget-cpu-parts").inner_text()
    )
    assert (
        "in use 2, requested 2, left 12 of 16 GiB"
        in budget.locator("#budget-memory-parts").inner_text()
    )
    bar = developer.locator("#budget-cpu")
    assert bar.get_attribute("role") == "img"
    assert float(developer.locator("#budget-cpu .bar-live").get_attribute("width")) == 25
    assert "payments-shop-prod" in developer.locator("#using-most").inner_text()
    docs_screenshot(developer, "tenant-budget", "#budget")

    admin = signed_in_page(browser, live_server, world["admin"])
    admin.goto(f"{live_server.url}/")
    admin.click("nav >> text=Dashboard")
    oldest = admin.locator("#oldest-waiting")
    assert "waiting 3h 1m" in oldest.inner_text()
    assert oldest.locator("a").first.get_attribute("href") == f"/requests/{waiting.pk}/"
    assert "over 11 decisions" in admin.locator("#lead-time figcaption").inner_text()
    failures = admin.locator("#failures tbody tr")
    assert [" ".join(failures.nth(row).inner_text().split()) for row in range(3)] == [
        "Cluster unreachable 2",
        "GitOps repository unreachable 1",
        "Refused by the API server (401/403) 1",
    ]
    assert "over 8 requests" in admin.locator("#provisioning-time figcaption").inner_text()
    assert admin.locator("#lead-time rect.day-bar").count() == 10  # days with decisions
    docs_screenshot(admin, "admin-dashboard")
