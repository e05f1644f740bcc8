"""A tenant's costs month over month, used against idle, in headless Chromium: six months of
namespaces (a quota raised mid-month, one added later) measured day by day through the
Prometheus stand-in since the second month. The picture in docs/showback.md comes from here."""

from __future__ import annotations

import math

import pytest

from tests.support.browser import (
    docs_screenshot,
    needs_chromium,
    serious_violations,
    signed_in_page,
)
from tests.support.prometheus import prometheus_stand_in

pytestmark = [pytest.mark.browser, needs_chromium]


def wavy(base: float, swing: float, days: float):
    """A value around `base`, up and down by `swing` over `days` days."""
    return lambda at: base + swing * math.sin(at / 86_400 / days * 2 * math.pi)


@pytest.mark.django_db(transaction=True)
def test_a_member_compares_used_and_idle_month_over_month(live_server, browser, settings):
    from datetime import timedelta

    from django.utils import timezone

    from tenants import demo
    from tenants.models import Cluster, ClusterPrice, EnvironmentTier, Namespace, Tenant, User
    from tenants.selectors.charges import midnight
    from tenants.selectors.usage_history import last_months
    from tenants.services import allocations, close_due_months
    from tenants.services.usage_history import collect_usage
    from tests.support.tenants_showback import PRICES

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    payments = Tenant.objects.get(slug="payments")
    sandbox = Cluster.objects.get(name="sandbox")
    ClusterPrice.objects.create(cluster=sandbox, **PRICES)
    months = last_months()

    def hold(name, tier, cpu, memory, since):
        made = Namespace.objects.create(
            name=name,
            tenant=payments,
            tier=EnvironmentTier.objects.get(slug=tier),
            cluster=sandbox,
            cpu_millis=cpu,
            memory_mib=memory,
            storage_gib=20,
            state="active",
        )
        allocations.record_held([made], at=since)
        return made

    hold("payments-shop-prod", "prod", 8000, 16384, midnight(months[0]))
    dev = hold("payments-shop-dev", "dev", 2000, 4096, midnight(months[0]))
    Namespace.objects.filter(pk=dev.pk).update(cpu_millis=4000, memory_mib=8192)
    dev.refresh_from_db()
    allocations.record_held([dev], at=midnight(months[2]) + timedelta(days=14))
    hold("payments-shop-staging", "staging", 2000, 4096, midnight(months[3]))
    series = {
        "payments-shop-prod": {"cpu": wavy(4.5, 1.0, 40), "memory": wavy(11.0, 1.5, 25)},
        "payments-shop-dev": {"cpu": wavy(0.6, 0.3, 9), "memory": wavy(2.5, 0.5, 12)},
        "payments-shop-staging": {"cpu": wavy(0.3, 0.1, 7), "memory": 1.2},
    }
    with prometheus_stand_in(series) as prometheus:
        settings.BERTH_PROMETHEUS_URL = prometheus.url
        day, today = months[1], timezone.localdate()
        while day < today:  # measured from the second month on, as beat collects each day
            assert collect_usage(day=day).problem == ""
            day += timedelta(days=1)
    close_due_months()  # as beat closes them at the start of each

    page = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    page.goto(f"{live_server.url}/tenants/payments/#usage-history")

    section = page.locator("#usage-history")
    assert section.locator("svg.history-chart g.month-bar").count() == 6
    # The first month was not measured, nor this one on its first day (today is not in yet).
    assert section.locator("rect.idle-bar").count() == (5 if today.day > 1 else 4)
    rows = section.locator("#usage-history-table tbody tr")
    assert rows.count() == 6
    assert "not measured" in rows.nth(5).inner_text()  # the oldest, last
    assert "(open)" in rows.nth(0).inner_text() and "(open)" not in rows.nth(1).inner_text()
    assert "core-hours" in section.inner_text() and "idle" in section.inner_text()
    assert serious_violations(page) == []
    docs_screenshot(page, "tenant-costs-history", "#usage-history")
