"""Hibernation in headless Chromium: a developer finds their dev namespace asleep on its
tier's schedule (until when, the schedule in words, who carries it out), wakes it for two
hours with the page's button, and sees it waking; a platform admin's top bar stays one line
on the namespace's page. The screenshot in the docs (namespace-asleep) comes from here."""

from datetime import timedelta

import pytest
import time_machine

from tenants.choices import NamespaceState
from tenants.models import Cluster, Namespace
from tenants.services.definitions import current_bundle_revision, current_tier_revision
from tests.browser.test_layout import one_line
from tests.support.browser import (
    docs_screenshot,
    needs_chromium,
    screenshot,
    serious_violations,
    signed_in_page,
)
from tests.support.sleep_schedules import ROME_NIGHT, rome_evenings

pytestmark = [pytest.mark.browser, needs_chromium]

NOW = ROME_NIGHT


@pytest.fixture
def fixed_clock():
    with time_machine.travel(NOW, tick=True):
        yield


@pytest.mark.django_db(transaction=True)
def test_a_developer_finds_their_namespace_asleep_and_wakes_it(
    live_server, browser, fixed_clock, demo_world
):
    dev = rome_evenings()
    common = {
        "tenant": demo_world["tenant"],
        "tier": dev,
        "tier_revision": current_tier_revision(tier=dev),
        "bundle_revision": current_bundle_revision(),
        "cluster": Cluster.objects.get(name="sandbox"),
        "cpu_millis": 1000,
        "memory_mib": 2048,
        "state": NamespaceState.ACTIVE,
    }
    shop = Namespace.objects.create(
        name="payments-shop-dev", asleep=True, slept_at=NOW - timedelta(hours=3), **common
    )
    Namespace.objects.create(name="payments-cart-dev", asleep=True, slept_at=NOW, **common)

    developer = signed_in_page(browser, live_server, demo_world["developer"])
    developer.goto(f"{live_server.url}/tenants/payments/")
    assert "asleep" in developer.inner_text('[data-namespace-sleep="payments-shop-dev"]')
    screenshot(developer, "sleep-tenant-list")
    developer.click("a >> text=payments-shop-dev")
    section = developer.locator("#sleep")
    said = " ".join(section.inner_text().split())
    assert "Asleep until Wed 2026-03-18 07:00 UTC (Wed 08:00 Europe/Rome)" in said
    assert "Monday to Friday (Europe/Rome time); asleep through the other days." in said
    assert "Berth: its Deployments and StatefulSets go to zero replicas" in said
    assert serious_violations(developer) == []
    docs_screenshot(developer, "namespace-asleep")
    developer.click("#sleep-change summary")
    developer.check("input[name=mode][value=custom]")
    assert serious_violations(developer) == []
    screenshot(developer, "sleep-schedule-form")
    developer.fill("#id_sleep_weekdays", "5-1")
    developer.click("text=Ask for this schedule")
    assert "runs backwards" in developer.inner_text("#sleep-schedule-form")
    assert serious_violations(developer) == []
    screenshot(developer, "sleep-schedule-errors")
    developer.go_back()
    developer.reload()

    developer.fill("#id_hours", "2")
    developer.click("#wake-now")
    assert "stays awake until 2026-03-18 00:00 UTC" in developer.inner_text(".messages")
    assert "waking" in developer.inner_text("#sleep-now")
    shop.refresh_from_db()
    assert shop.awake_until is not None
    assert abs(shop.awake_until - (NOW + timedelta(hours=2))) < timedelta(minutes=1)

    admin = signed_in_page(browser, live_server, demo_world["admin"])
    admin.goto(f"{live_server.url}/namespaces/{shop.pk}/")
    bar = one_line(admin)
    assert bar["height"] <= bar["line"] + 1, bar
    assert not bar["overflow"]
    admin.goto(f"{live_server.url}/dashboard/")
    assert "2 of 2 live namespaces are asleep on their clusters now" in " ".join(
        admin.inner_text("#asleep-now").split()
    )
    screenshot(admin, "sleep-dashboard")
