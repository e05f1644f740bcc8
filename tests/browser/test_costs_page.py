"""The platform's costs page in headless Chromium: a closed month per tenant, cluster and
tier, with an adjustment; the picture in docs/showback.md comes from here."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.support.browser import (
    docs_screenshot,
    needs_chromium,
    serious_violations,
    signed_in_page,
)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.mark.django_db(transaction=True)
def test_a_platform_admin_reads_a_closed_month_and_its_adjustment(live_server, browser):

    from django.utils import timezone

    from tenants import demo
    from tenants.models import Cluster, ClusterPrice, EnvironmentTier, Namespace, Tenant, User
    from tenants.selectors.charges import midnight, month_start, previous_month
    from tenants.services import add_adjustment, allocations, close_due_months
    from tests.support.tenants_showback import PRICES

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    sandbox = Cluster.objects.get(name="sandbox")
    ClusterPrice.objects.create(cluster=sandbox, **PRICES)
    last_month = previous_month(month_start(timezone.localdate()))
    made = [
        ("payments", "payments-shop-dev", "dev", 2000, 4096),
        ("payments", "payments-shop-prod", "prod", 4000, 8192),
        ("search", "search-index-dev", "dev", 1000, 2048),
        ("search", "search-index-prod", "prod", 8000, 16384),
    ]
    for slug, name, tier, cpu, memory in made:
        namespace = Namespace.objects.create(
            name=name,
            tenant=Tenant.objects.get(slug=slug),
            tier=EnvironmentTier.objects.get(slug=tier),
            cluster=sandbox,
            cpu_millis=cpu,
            memory_mib=memory,
            storage_gib=5,
            state="active",
        )
        allocations.record_held([namespace], at=midnight(last_month) - timedelta(days=3))
    admin = User.objects.get(username="pat")
    close_due_months()
    add_adjustment(
        actor=admin,
        tenant=Tenant.objects.get(slug="search"),
        month=last_month,
        amount="-25",
        note="Credit for the index rebuild outage",
    )

    page = signed_in_page(browser, live_server, admin)
    page.goto(f"{live_server.url}/costs/?month={last_month:%Y-%m}")

    assert page.locator("#month-closed").is_visible()
    assert page.locator("#costs-by-tenant tbody tr").count() == 2
    assert "EUR -25.00" in page.inner_text("#costs-totals")
    assert serious_violations(page) == []
    docs_screenshot(page, "platform-costs", "main")
