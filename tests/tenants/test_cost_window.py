"""Time-weighted cost over any window (GET /api/v1/costs/): per namespace, project, tier,
tenant and cluster, across a closed month and an open one, to the cent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from tenants.models import Namespace, Project, Tenant
from tenants.pricing import PRICE_FIELDS, hourly
from tenants.selectors.costs import tenant_costs
from tenants.services import add_adjustment, allocations, close_due_months
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import HOURLY, PRICES, namespace

OCTOBER_1 = datetime(2026, 10, 1, tzinfo=UTC)
NOVEMBER_1 = datetime(2026, 11, 1, tzinfo=UTC)
NOVEMBER_20 = datetime(2026, 11, 20, tzinfo=UTC)
NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
CENT = Decimal("0.01")
RAISED = hourly(
    cpu_millis=4000,
    memory_mib=8192,
    storage_gib=10,
    prices={name: PRICES[name] for name in PRICE_FIELDS},
)


def hours(start: datetime, end: datetime) -> Decimal:
    return Decimal((end - start).total_seconds()) / 3600


@pytest.fixture
def history(api_world, priced):
    """payments-shop-dev since October (its quota raised on November 20th), search's
    namespace since November 10th; October closed, with a credit for payments."""
    shop = Project.objects.create(tenant=api_world.payments, name="shop")
    made = namespace(api_world, created=OCTOBER_1, project=shop)
    search = Tenant.objects.get(slug="search")
    namespace(
        api_world,
        "search-idx-prod",
        created=NOVEMBER_1 + timedelta(days=9),
        tier="prod",
        tenant=search,
    )
    Namespace.objects.filter(pk=made.pk).update(cpu_millis=4000, memory_mib=8192)
    made.refresh_from_db()
    allocations.record_held([made], at=NOVEMBER_20)
    with time_machine.travel(NOW, tick=False):
        close_due_months()
        add_adjustment(
            actor=api_world.admin,
            tenant=api_world.payments,
            month="2026-10",
            amount="-5",
            note="credit",
        )
        yield


def window(user, **query):
    with time_machine.travel(NOW, tick=False):
        return api(user).get("/api/v1/costs/", query)


def by_key(answer) -> dict[str, str]:
    return {row["key"]: row["cost"] for row in answer.json()["costs"]}


def test_a_window_inside_a_month_is_charged_for_each_quota_s_hours(api_world, history):
    answer = window(api_world.member, start="2026-11-15", end="2026-11-25", by="namespace")

    assert answer.status_code == 200, answer.content
    start, end = datetime(2026, 11, 15, tzinfo=UTC), datetime(2026, 11, 25, tzinfo=UTC)
    expected = HOURLY * hours(start, NOVEMBER_20) + RAISED * hours(NOVEMBER_20, end)
    assert by_key(answer) == {"sandbox/payments-shop-dev": str(expected.quantize(CENT))}


def test_whole_months_add_up_to_their_pages_with_the_closed_months_adjustment(api_world, history):
    answer = window(api_world.admin, start="2026-10-01", end="2026-12-01", by="tenant")

    with time_machine.travel(NOW, tick=False):
        october = tenant_costs(api_world.payments, month=OCTOBER_1.date())
        november = tenant_costs(api_world.payments, month=NOVEMBER_1.date())
    totals = by_key(answer)
    # Rounded once, as each month's page rounds its own (the -5 credit included):
    assert totals["payments"] == str((october.total + november.total).quantize(CENT))
    assert october.adjusted == Decimal(-5)
    assert set(totals) == {"payments", "search"}
    assert answer.json()["end"] == "2026-11-25T12:00:00Z"  # not after now


@pytest.mark.parametrize(
    ("by", "keys"),
    [
        ("project", {"payments/shop", "search/(no project)"}),
        ("tier", {"dev", "prod"}),
        ("cluster", {"sandbox"}),
    ],
)
def test_costs_are_added_up_by_what_is_asked(api_world, history, by, keys):
    answer = window(api_world.admin, start="2026-11-01", end="2026-11-25", by=by)

    assert set(by_key(answer)) == keys


def test_a_member_sees_only_their_tenants_and_never_another_one(api_world, history):
    mine = window(api_world.member, start="2026-11-01", end="2026-11-25", by="tenant")
    other = window(api_world.member, start="2026-11-01", end="2026-11-25", tenant="search")

    assert set(by_key(mine)) == {"payments"}
    assert other.status_code == 404


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"start": "2026-11-20", "end": "2026-11-10"}, "end"),
        ({"start": "2025-01-01", "end": "2026-11-10"}, "end"),
        ({"start": "yesterday", "end": "2026-11-10"}, "start"),
        ({"start": "2026-11-01", "end": "2026-11-10", "by": "colour"}, "by"),
        ({"end": "2026-11-10"}, "start"),
    ],
)
def test_a_window_that_is_not_one_is_refused_naming_the_field(api_world, query, field):
    answer = window(api_world.member, **query)

    assert field in assert_problem(answer, 400, "validation-error")["errors"]
