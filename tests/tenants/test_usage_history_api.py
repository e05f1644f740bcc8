"""Used against allocated, month over month, on the tenant's page and the API: core-hours and
GiB-hours held (the allocations, a quota change mid-month included), used (the daily
averages times the hours held), idle, and what the idle part cost; a month without a
measurement says so rather than showing nothing used. Who may read it.

The days are stored as collection stores them (test_usage_history.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from tenants.models import Namespace, UsageDay
from tenants.services import allocations, close_due_months
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import NOW, PRICES, namespace

OCTOBER = datetime(2026, 10, 1, tzinfo=UTC)
CHANGED = datetime(2026, 10, 16, tzinfo=UTC)  # 2 cores and 4 GiB until then, 4 and 8 after


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def october(api_world, priced, clock):
    """payments-shop-dev held from October 1st, its quota doubled on the 16th, using one
    core and 2 GiB on average every day of October; November not measured yet."""
    made = namespace(api_world, created=OCTOBER)
    Namespace.objects.filter(pk=made.pk).update(cpu_millis=4000, memory_mib=8192)
    made.refresh_from_db()
    allocations.record_held([made], at=CHANGED)
    UsageDay.objects.bulk_create(
        UsageDay(
            namespace=made, day=date(2026, 10, day), cpu_cores=1.0, memory_gib=2.0, samples=288
        )
        for day in range(1, 32)
    )
    return made


def history(world, user=None, **query):
    response = api(user or world.member).get("/api/v1/tenants/payments/costs/history/", query)
    assert response.status_code == 200, response.content[:500]
    return {month["month"]: month for month in response.json()["months"]}


def money(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01")))


def test_used_against_allocated_counts_a_quota_change_mid_month(api_world, october):
    month = history(api_world, months=2)["2026-10"]

    before, after = 15 * 24, 16 * 24  # hours at 2 cores and 4 GiB, then at 4 and 8
    assert month["measured"] is True and month["measured_share"] == 1.0
    assert month["cpu"] == {
        "unit": "core-hours",
        "allocated": 2 * before + 4 * after,  # 2,256
        "used": 1.0 * 31 * 24,  # 744
        "idle": 1 * before + 3 * after,  # 1,512
    }
    assert month["memory"] == {
        "unit": "GiB-hours",
        "allocated": 4 * before + 8 * after,
        "used": 2.0 * 31 * 24,
        "idle": 2 * before + 6 * after,
    }
    cpu, memory = PRICES["cpu_core_hour"], PRICES["memory_gib_hour"]
    assert month["idle_cost"] == money(
        (1 * before + 3 * after) * cpu + (2 * before + 6 * after) * memory
    )
    assert month["used_cost"] == money(744 * cpu + 1488 * memory)
    fixed = (10 * PRICES["storage_gib_month"] + PRICES["namespace_month"]) / 730
    assert month["cost"] == money(
        before * (2 * cpu + 4 * memory + fixed) + after * (4 * cpu + 8 * memory + fixed)
    )
    assert month["currency"] == "EUR" and month["closed"] is False


def test_a_closed_month_reads_the_same_from_its_rows(api_world, october):
    open_october = history(api_world, months=2)["2026-10"]

    close_due_months()
    closed_october = history(api_world, months=2)["2026-10"]

    assert closed_october["closed"] is True
    assert {**closed_october, "closed": False} == open_october


def test_a_month_without_measurements_says_so_rather_than_nothing_used(api_world, october):
    month = history(api_world, months=2)["2026-11"]

    assert month["measured"] is False
    assert month["cpu"]["allocated"] == 4 * 11 * 24
    assert month["cpu"]["used"] is None and month["cpu"]["idle"] is None
    assert month["idle_cost"] is None and month["used_cost"] is None


def test_using_more_than_held_one_day_makes_no_other_days_idle_quota_used(api_world, october):
    UsageDay.objects.filter(day=date(2026, 10, 1)).update(cpu_cores=50.0)

    month = history(api_world, months=2)["2026-10"]

    assert month["cpu"]["used"] == 744 + 49 * 24
    assert month["cpu"]["idle"] == 1 * 14 * 24 + 3 * 16 * 24  # the 1st: none idle, not less


def test_the_last_six_months_are_shown_oldest_first(api_world, october):
    months = list(history(api_world))

    assert months == ["2026-06", "2026-07", "2026-08", "2026-09", "2026-10", "2026-11"]


def test_the_tenants_page_draws_used_and_idle_per_month(api_world, october, client):
    client.force_login(api_world.member)

    page = client.get("/tenants/payments/").content.decode()

    section = page[page.index('id="usage-history"') :]
    assert "Used against allocated, month over month" in section
    assert "<title>October 2026: EUR" in section and "idle EUR 75.60" in section
    assert 'class="idle-bar" fill="url(#idle-hatch)"' in section
    assert "744.0 of 2,256.0" in section  # CPU core-hours used of allocated
    assert "not measured, of 1,056.0" in section  # November: allocated only


# --- who may read it ---------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["member", "viewer", "owner", "admin"])
def test_members_and_platform_admins_read_the_history(api_world, october, who):
    assert "2026-10" in history(api_world, getattr(api_world, who), months=2)


def test_someone_outside_the_tenant_gets_not_found(api_world, october):
    response = api(api_world.outsider).get("/api/v1/tenants/payments/costs/history/")
    assert_problem(response, 404)


@pytest.mark.parametrize("months", ["0", "25", "six"])
def test_a_number_of_months_out_of_range_is_refused(api_world, months):
    response = api(api_world.member).get(
        "/api/v1/tenants/payments/costs/history/", {"months": months}
    )
    assert "months" in assert_problem(response, 400, "validation-error")["errors"]
