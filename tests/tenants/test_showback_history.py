"""Showback over time: a namespace is charged from Ready to removal at the quota and the
prices in force at each hour; a price change applies from its date, never backwards; a
month is closed into rows that never change, corrected only by dated adjustments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from tenants.choices import NamespaceState
from tenants.models import AuditEvent, ClosedMonth, MonthlyCharge, Namespace
from tenants.pricing import hourly
from tenants.services import allocations, close_due_months, close_month
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import HOURLY, PRICES, costs, namespace

NOVEMBER_1 = datetime(2026, 11, 1, tzinfo=UTC)
NOVEMBER_20 = datetime(2026, 11, 20, tzinfo=UTC)
DECEMBER_1 = datetime(2026, 12, 1, tzinfo=UTC)
CENT = Decimal("0.01")
# After the raise on the 20th: 4 cores, 8 GiB, 10 GiB of storage.
RAISED = hourly(
    cpu_millis=4000,
    memory_mib=8192,
    storage_gib=10,
    prices={name: value for name, value in PRICES.items() if name not in ("currency",)},
)


def raise_quota(made: Namespace, *, at: datetime) -> None:
    """The quota change applied at `at`, recorded as the engine records it."""
    Namespace.objects.filter(pk=made.pk).update(cpu_millis=4000, memory_mib=8192)
    made.refresh_from_db()
    allocations.record_held([made], at=at)


def hours(start: datetime, end: datetime) -> Decimal:
    return Decimal((end - start).total_seconds()) / 3600


def test_a_quota_raised_mid_month_is_charged_for_the_hours_each_quota_was_held(api_world, priced):
    made = namespace(api_world, created=NOVEMBER_1)
    raise_quota(made, at=NOVEMBER_20)

    with time_machine.travel(DECEMBER_1 + timedelta(hours=1), tick=False):
        answer = costs(api_world, month="2026-11")

    expected = HOURLY * hours(NOVEMBER_1, NOVEMBER_20) + RAISED * hours(NOVEMBER_20, DECEMBER_1)
    assert answer["total"] == str(expected.quantize(CENT))
    # Not today's quota for the whole month, as before history was kept:
    assert answer["total"] != str((RAISED * hours(NOVEMBER_1, DECEMBER_1)).quantize(CENT))
    assert answer["days"]["2026-11-19"] == str((HOURLY * 24).quantize(CENT))
    assert answer["days"]["2026-11-20"] == str((RAISED * 24).quantize(CENT))
    [row] = answer["namespaces"]
    assert row["cpu_millis"] == 4000 and row["charged_from"] == "2026-11-01T00:00:00Z"


def test_the_time_a_request_waits_for_approval_is_not_charged(api_world, priced):
    claimed = NOVEMBER_1
    ready = NOVEMBER_1 + timedelta(days=2, hours=5)
    namespace(api_world, created=claimed, ready=ready)

    with time_machine.travel(NOVEMBER_20, tick=False):
        answer = costs(api_world)

    assert answer["total"] == str((HOURLY * hours(ready, NOVEMBER_20)).quantize(CENT))
    assert answer["days"]["2026-11-01"] == answer["days"]["2026-11-02"] == "0.00"
    assert answer["namespaces"][0]["charged_from"] == "2026-11-03T05:00:00Z"


def test_a_namespace_still_waiting_costs_nothing(api_world, priced):
    namespace(api_world, created=NOVEMBER_1, state=NamespaceState.REQUESTED)

    with time_machine.travel(NOVEMBER_20, tick=False):
        assert costs(api_world)["total"] == "0.00"


def test_a_price_change_dated_next_month_does_not_move_this_month(api_world, priced):
    namespace(api_world, created=NOVEMBER_1)
    with time_machine.travel(NOVEMBER_20, tick=False):
        before = costs(api_world)
        response = api(api_world.admin).put(
            "/api/v1/clusters/sandbox/prices/",
            {"cpu_core_hour": "0.50", "effective_from": "2026-12-01"},
            format="json",
        )
        assert response.status_code == 200, response.content
        shown = response.json()
        after = costs(api_world)

    assert after == before
    assert shown["cpu_core_hour"] == "0.040000"  # still in force
    assert [(each["effective_from"], each["cpu_core_hour"]) for each in shown["upcoming"]] == [
        ("2026-12-01T00:00:00+00:00", "0.500000")
    ]
    with time_machine.travel(DECEMBER_1 + timedelta(hours=10), tick=False):
        december = costs(api_world)
        november = costs(api_world, month="2026-11")
    dearer = HOURLY + 2 * (Decimal("0.50") - Decimal("0.04"))
    assert december["total"] == str((dearer * 10).quantize(CENT))
    assert november["total"] == str((HOURLY * hours(NOVEMBER_1, DECEMBER_1)).quantize(CENT))


@pytest.mark.parametrize("when", ["2026-11-19", "2026-11-19T23:00:00Z", "2020-01-01"])
def test_a_price_change_dated_in_the_past_is_refused_and_nothing_changes(api_world, priced, when):
    with time_machine.travel(NOVEMBER_20, tick=False):
        response = api(api_world.admin).put(
            "/api/v1/clusters/sandbox/prices/",
            {"cpu_core_hour": "9", "effective_from": when},
            format="json",
        )

    assert "effective_from" in assert_problem(response, 400, "validation-error")["errors"]
    assert "never backwards" in response.content.decode()
    assert not AuditEvent.objects.filter(action="cluster.prices").exists()


@pytest.mark.parametrize("when", ["soon", "2026-13-01", "2026-12-01T10:00:00"])
def test_a_date_that_is_not_one_is_refused(api_world, priced, when):
    response = api(api_world.admin).put(
        "/api/v1/clusters/sandbox/prices/", {"effective_from": when}, format="json"
    )

    assert "effective_from" in assert_problem(response, 400, "validation-error")["errors"]


def test_a_closed_month_reads_the_same_after_quota_and_price_edits(api_world, priced):
    made = namespace(api_world, created=NOVEMBER_1)
    raise_quota(made, at=NOVEMBER_20)
    with time_machine.travel(DECEMBER_1 + timedelta(hours=1), tick=False):
        open_answer = costs(api_world, month="2026-11")
        assert close_due_months() == [DECEMBER_1.date().replace(month=11)]
        closed_answer = costs(api_world, month="2026-11")
        # In December: the quota lowered and every price raised from now.
        Namespace.objects.filter(pk=made.pk).update(cpu_millis=500, memory_mib=512)
        made.refresh_from_db()
        allocations.record_held([made])
        response = api(api_world.admin).put(
            "/api/v1/clusters/sandbox/prices/",
            {"cpu_core_hour": "1", "memory_gib_hour": "1", "namespace_month": "100"},
            format="json",
        )
        assert response.status_code == 200
    with time_machine.travel(DECEMBER_1 + timedelta(days=20), tick=False):
        later = costs(api_world, month="2026-11")

    assert closed_answer["closed"] is True and open_answer["closed"] is False
    assert {**closed_answer, "closed": False} == open_answer
    assert later == closed_answer


def test_closing_is_done_once_and_only_for_months_that_are_over(api_world, priced):
    namespace(api_world, created=NOVEMBER_1 - timedelta(days=40))

    with time_machine.travel(NOVEMBER_20, tick=False):
        assert [f"{m:%Y-%m}" for m in close_due_months()] == ["2026-09", "2026-10"]
        assert close_due_months() == []
        rows = MonthlyCharge.objects.count()
        with pytest.raises(Exception, match="not over yet"):
            close_month(NOVEMBER_1.date())

    assert rows == 2 and ClosedMonth.objects.count() == 2
    with pytest.raises(TypeError):
        MonthlyCharge.objects.filter(month=NOVEMBER_1.date().replace(month=10)).update(cost=0)
    with pytest.raises(TypeError):
        MonthlyCharge.objects.all().delete()
    row = MonthlyCharge.objects.first()
    row.cost = Decimal(0)
    with pytest.raises(TypeError):
        row.save()


def test_a_correction_of_a_closed_month_is_a_dated_adjustment_shown_as_such(api_world, priced):
    namespace(api_world, created=NOVEMBER_1)
    with time_machine.travel(DECEMBER_1 + timedelta(hours=2), tick=False):
        close_due_months()
        charged = Decimal(costs(api_world, month="2026-11")["total"])
        response = api(api_world.admin).post(
            "/api/v1/costs/adjustments/",
            {
                "tenant": "payments",
                "month": "2026-11",
                "amount": "-12.50",
                "note": "Outage credit, INC-42",
                "namespace": "payments-shop-dev",
            },
            format="json",
        )
        answer = costs(api_world, month="2026-11")

    assert response.status_code == 201, response.content
    assert answer["charged"] == str(charged)
    assert answer["adjusted"] == "-12.50"
    assert answer["total"] == str(charged - Decimal("12.50"))
    [adjustment] = answer["adjustments"]
    assert adjustment["note"] == "Outage credit, INC-42"
    assert adjustment["added_at"].startswith("2026-12-01T02:00")
    event = AuditEvent.objects.get(action="costs.adjustment")
    assert event.after["amount"] == "-12.50"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"month": "2026-12"}, "month"),  # still open
        ({"month": "2026-13"}, "month"),
        ({"amount": "0"}, "amount"),
        ({"amount": "lots"}, "amount"),
        ({"note": ""}, "note"),
        ({"tenant": "nobody"}, "tenant"),
        ({"currency": "USD"}, "currency"),
    ],
)
def test_a_bad_adjustment_is_refused_naming_its_field_and_nothing_is_saved(
    api_world, priced, body, field
):
    namespace(api_world, created=NOVEMBER_1)
    with time_machine.travel(DECEMBER_1 + timedelta(hours=2), tick=False):
        close_due_months()
        response = api(api_world.admin).post(
            "/api/v1/costs/adjustments/",
            {"tenant": "payments", "month": "2026-11", "amount": "5", "note": "why", **body},
            format="json",
        )

    assert field in assert_problem(response, 400, "validation-error")["errors"]
    assert not MonthlyCharge.objects.filter(kind="adjustment").exists()


def test_only_platform_admins_adjust(api_world, priced):
    response = api(api_world.owner).post(
        "/api/v1/costs/adjustments/",
        {"tenant": "payments", "month": "2026-10", "amount": "-5", "note": "mine"},
        format="json",
    )

    assert response.status_code == 403
