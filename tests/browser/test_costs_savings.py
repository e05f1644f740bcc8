"""What sleeping saves, in headless Chromium: a tenant whose dev namespace sleeps every night
and whose staging one has slept since the 9th reads, in its Costs section, the month's hours
asleep and what they saved, each namespace's share, and which one sleeps now. The picture in
docs/showback.md (costs-savings.png) comes from here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from tests.support.browser import (
    docs_screenshot,
    needs_chromium,
    serious_violations,
    signed_in_page,
)

pytestmark = [pytest.mark.browser, needs_chromium]

# One moment, so the picture (the month, the days on the chart) is the same on every run:
# a Thursday evening, the dev namespace asleep since 20:00.
NOW = datetime(2026, 11, 19, 21, 30, tzinfo=UTC)
READY = datetime(2026, 11, 2, 9, tzinfo=UTC)


@pytest.fixture
def fixed_clock():
    with time_machine.travel(NOW, tick=True):
        yield


@pytest.mark.django_db(transaction=True)
def test_a_member_reads_what_sleeping_saved_this_month(live_server, browser, fixed_clock):
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
    asleep_prices = {
        "asleep_cpu_core_hour": Decimal("0.01"),
        "asleep_memory_gib_hour": Decimal("0.001"),
    }
    ClusterPrice.objects.create(cluster=sandbox, **{**PRICES, **asleep_prices})
    shop = Project.objects.create(tenant=payments, name="shop")
    held = {}
    for name, tier, cpu, memory in (
        ("payments-shop-dev", "dev", 2000, 4096),
        ("payments-shop-staging", "staging", 1000, 2048),
        ("payments-shop-prod", "prod", 4000, 8192),
    ):
        held[tier] = Namespace.objects.create(
            name=name,
            tenant=payments,
            tier=EnvironmentTier.objects.get(slug=tier),
            cluster=sandbox,
            project=shop,
            cpu_millis=cpu,
            memory_mib=memory,
            storage_gib=5,
            state="active",
        )
        Namespace.objects.filter(pk=held[tier].pk).update(created_at=READY)
        allocations.record_held([held[tier]], at=READY)

    # Asleep from 20:00 to 08:00, as hibernation records it: dev every night (tonight's
    # too, so it sleeps now), staging from the 9th on.
    def nights(namespace, first_day: int, last_day: int) -> None:
        for day in range(first_day, last_day + 1):
            evening = datetime(2026, 11, day, 20, tzinfo=UTC)
            allocations.record_sleep([namespace], asleep=True, at=evening)
            if evening + timedelta(hours=12) < NOW:
                allocations.record_sleep(
                    [namespace], asleep=False, at=evening + timedelta(hours=12)
                )

    nights(held["dev"], 2, 19)
    nights(held["staging"], 9, 18)
    Namespace.objects.filter(pk=held["dev"].pk).update(asleep=True)

    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    page.goto(f"{live_server.url}/tenants/payments/#costs")

    section = page.locator("#costs")
    # dev: 17 nights of 12 hours and 1.5 hours tonight at 2 cores and 4 GiB, saving
    # 0.03 a core-hour and 0.004 a GiB-hour; staging: 10 nights at 1 core and 2 GiB.
    assert page.inner_text("#costs-asleep-hours") == "325.5 namespace-hours"
    assert page.inner_text("#costs-savings") == "EUR 20.18"  # 205.5 × 0.076 + 120 × 0.038
    rows = section.locator("#costs-namespaces tbody tr")
    said = {rows.nth(row).locator("code").first.inner_text(): rows.nth(row) for row in range(3)}
    assert "205.5 h asleep, saved 15.62" in said["payments-shop-dev"].inner_text()
    assert "120.0 h asleep, saved 4.56" in said["payments-shop-staging"].inner_text()
    assert "asleep" not in said["payments-shop-prod"].inner_text()
    assert said["payments-shop-dev"].locator(".badge").inner_text() == "asleep"
    assert serious_violations(page) == []
    docs_screenshot(page, "costs-savings", "#costs")
