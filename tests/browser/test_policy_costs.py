"""The Policy page's "Try before saving" panel and a tenant's costs, in headless Chromium.
The pictures in docs/requests-and-approvals.md and docs/showback.md come from here."""

from __future__ import annotations

import pytest

from tests.support.browser import (
    docs_screenshot,
    needs_chromium,
    serious_violations,
    signed_in_page,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.django_db(transaction=True)
def test_an_admin_tries_a_rule_change_sees_what_it_changes_and_saves_it(live_server, browser):
    from tenants import demo
    from tenants.models import ApprovalRule, AuditEvent, Request, Tenant, User
    from tests.support.workflow import ask_for_namespace

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    payments, developer = Tenant.objects.get(slug="payments"), User.objects.get(username="dev")
    for number in range(3):
        ask_for_namespace(payments, developer, app=f"shop{number}")
    ask_for_namespace(payments, developer, app="web", tier="staging", cpu="1", memory="1Gi")
    # One decided before Berth kept the attributes the rules saw.
    Request.objects.filter(pk=Request.objects.order_by("pk").first().pk).update(
        policy_attributes=None
    )
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")

    page = signed_in_page(browser, live_server, User.objects.get(username="pat"))
    page.goto(f"{live_server.url}/policy/")
    page.click(f"text={rule.name}")
    page.uncheck("#id_enabled")
    page.select_option("#id_whatif-tenant", "payments")
    page.click("button:has-text('Try before saving')")

    result = page.locator("#whatif-result")
    assert "3 of 4 decided requests would be decided differently" in result.inner_text()
    assert "auto-approved → needs approval" in result.inner_text()
    assert result.locator("tbody tr").count() == 3
    assert "attributes reconstructed" in result.inner_text()
    # The form keeps what was typed: the rule is still unticked, nothing saved yet.
    assert not page.is_checked("#id_enabled")
    assert ApprovalRule.objects.get(pk=rule.pk).enabled
    assert serious_violations(page) == []
    docs_screenshot(page, "policy-whatif", "#try")

    page.click("button:has-text('Save rule')")
    assert f"Rule {rule.name} saved." in page.inner_text(".messages")
    saved = AuditEvent.objects.get(action="policy.rule_saved")
    assert saved.after["what_if"]["counts"] == {"auto_approve_to_require": 3}


@pytest.mark.django_db(transaction=True)
def test_a_member_reads_what_the_tenants_namespaces_cost(live_server, browser):
    from datetime import timedelta

    from django.utils import timezone

    from tenants import demo
    from tenants.models import (
        Cluster,
        ClusterPrice,
        EnvironmentTier,
        Namespace,
        Project,
        Tenant,
        User,
    )
    from tenants.services import allocations
    from tests.support.tenants_showback import PRICES

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    payments = Tenant.objects.get(slug="payments")
    sandbox = Cluster.objects.get(name="sandbox")
    ClusterPrice.objects.create(cluster=sandbox, **PRICES)
    shop = Project.objects.create(tenant=payments, name="shop")
    now = timezone.now()
    made = [
        ("payments-shop-dev", "dev", 2000, 4096, 20),
        ("payments-shop-prod", "prod", 4000, 8192, 10),
        ("payments-shop-review-7", "review", 500, 512, 1),
    ]
    for name, tier, cpu, memory, days in made:
        namespace = Namespace.objects.create(
            name=name,
            tenant=payments,
            tier=EnvironmentTier.objects.get(slug=tier),
            cluster=sandbox,
            project=shop,
            cpu_millis=cpu,
            memory_mib=memory,
            storage_gib=5,
            state="active",
            expires_at=now + timedelta(hours=6) if tier == "review" else None,
        )
        ready = now - timedelta(days=min(days, now.day - 1), hours=3)
        Namespace.objects.filter(pk=namespace.pk).update(created_at=ready)
        allocations.record_held([namespace], at=ready)

    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    page.goto(f"{live_server.url}/tenants/payments/#costs")

    section = page.locator("#costs")
    assert section.is_visible()
    assert "EUR" in page.inner_text("#costs-month-total")
    assert section.locator("#costs-namespaces tbody tr").count() == 3
    assert "until then" in section.inner_text()  # the review environment, until it expires
    assert "no Prometheus or OpenCost endpoint is configured" in section.inner_text()
    assert section.locator("svg.daily-chart rect.day-bar").count() >= 1
    assert serious_violations(page) == []
    docs_screenshot(page, "tenant-costs", "#costs")
