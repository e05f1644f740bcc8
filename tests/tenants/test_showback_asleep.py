"""Showback of hibernation: the hours a namespace sleeps are charged at its cluster's asleep
prices (CPU and memory; storage and the namespace itself as awake), what they would have
cost awake less what they cost is what sleeping saved, a quota changed while asleep stays
asleep, a closed month keeps its asleep stretches apart, and the pages, the API, the CSV and
the FOCUS export say so."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants import charging
from tenants.choices import AllocationChange
from tenants.models import Allocation, Cluster, ClusterPrice, MonthlyCharge, Namespace
from tenants.pricing import PRICE_FIELDS, hourly
from tenants.selectors.cost_totals import totals_by_tenant
from tenants.selectors.costs import rounded, tenant_costs
from tenants.services import allocations, close_due_months
from tenants.usage_history import MonthUsage
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import HOURLY, NOW, PRICES, costs, namespace

NOVEMBER_1 = datetime(2026, 11, 1, tzinfo=UTC)
SLEPT = datetime(2026, 11, 10, 20, tzinfo=UTC)  # 4 hours asleep on the 10th
WOKE = datetime(2026, 11, 11, 8, tzinfo=UTC)  # and 8 on the 11th
CENT = Decimal("0.01")
ASLEEP_PRICES = {**PRICES, "asleep_cpu_core_hour": Decimal("0.01")}
ASLEEP_PRICES["asleep_memory_gib_hour"] = Decimal("0.001")
# 2 cores, 4 GiB, 10 GiB of storage and the namespace, an hour asleep at ASLEEP_PRICES.
ASLEEP = 2 * Decimal("0.01") + 4 * Decimal("0.001") + (10 * Decimal("0.10") + Decimal("7.30")) / 730
AWAKE_HOURS = 11 * 24 - 12  # November 1 to 12, less the night asleep


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def asleep_priced(api_world):
    """The sandbox cluster priced as PRICES, with asleep prices for CPU and memory."""
    return ClusterPrice.objects.create(cluster=Cluster.objects.get(name="sandbox"), **ASLEEP_PRICES)


def sleep(made: Namespace, *, at: datetime, asleep: bool = True) -> None:
    """The namespace went to sleep (or woke) at `at`, recorded as hibernation records it."""
    Namespace.objects.filter(pk=made.pk).update(asleep=asleep)
    made.refresh_from_db()
    allocations.record_sleep([made], asleep=asleep, at=at)


@pytest.fixture
def night(api_world, asleep_priced):
    """payments-shop-dev from November 1st, asleep from the 10th at 20:00 to the 11th at 8."""
    made = namespace(api_world, created=NOVEMBER_1)
    sleep(made, at=SLEPT)
    sleep(made, at=WOKE, asleep=False)
    return made


# --- what it costs ------------------------------------------------------------------------


def test_a_piece_asleep_is_priced_at_the_asleep_prices_and_saves_the_difference():
    prices = tuple(ASLEEP_PRICES[name] for name in PRICE_FIELDS)
    lists = [charging.PriceList(1, "EUR", prices, NOVEMBER_1, None)]
    held = [charging.Held(7, 1, 2000, 4096, 10, SLEPT, WOKE, asleep=True)]

    [piece] = charging.pieces(held, lists, start=NOVEMBER_1, end=NOW)

    assert piece.per_hour == ASLEEP and piece.awake_per_hour == HOURLY
    assert piece.cost == ASLEEP * 12 and piece.asleep_hours == 12
    assert piece.savings == (HOURLY - ASLEEP) * 12
    assert abs(piece.savings - Decimal("0.912")) < Decimal("1e-20")  # 12 × (2 × 0.03 + 4 × 0.004)
    split = charging.asleep_by_day(piece, charging.days_of(SLEPT.date(), NOW.date(), UTC))
    assert {day.day: hours for day, (hours, _) in split.items()} == {10: 4, 11: 8}


def test_hours_asleep_are_charged_at_the_asleep_prices_and_their_savings_shown(
    api_world, night, clock
):
    answer = costs(api_world)

    expected = HOURLY * AWAKE_HOURS + ASLEEP * 12
    assert answer["total"] == str(expected.quantize(CENT))
    assert answer["asleep_hours"] == "12.00" and answer["savings"] == "0.91"
    assert answer["days"]["2026-11-10"] == str((HOURLY * 20 + ASLEEP * 4).quantize(CENT))
    [row] = answer["namespaces"]
    assert (row["asleep"], row["asleep_hours"], row["savings"]) == (False, "12.00", "0.91")
    page = tenant_costs(api_world.payments)
    assert abs(page.savings - Decimal("0.912")) < Decimal("1e-20")  # unrounded until shown


def test_at_the_default_asleep_prices_sleeping_costs_storage_and_the_namespace_only(
    api_world, priced, clock
):
    made = namespace(api_world, created=NOVEMBER_1)
    sleep(made, at=SLEPT)
    sleep(made, at=WOKE, asleep=False)

    answer = costs(api_world)

    fixed = (10 * Decimal("0.10") + Decimal("7.30")) / 730
    assert answer["total"] == str((HOURLY * AWAKE_HOURS + fixed * 12).quantize(CENT))
    assert answer["savings"] == "1.20"  # 12 hours of 2 cores at 0.04 and 4 GiB at 0.005


def test_a_quota_changed_while_asleep_stays_asleep(api_world, asleep_priced, clock):
    made = namespace(api_world, created=NOVEMBER_1)
    sleep(made, at=SLEPT)
    midnight = datetime(2026, 11, 11, tzinfo=UTC)
    Namespace.objects.filter(pk=made.pk).update(cpu_millis=4000, memory_mib=8192)
    made.refresh_from_db()
    allocations.record_held([made], at=midnight)
    sleep(made, at=WOKE, asleep=False)

    held = Allocation.objects.filter(namespace=made).order_by("started_at")
    assert [(each.started_by, each.asleep, each.cpu_millis) for each in held] == [
        (AllocationChange.READY, False, 2000),
        (AllocationChange.HIBERNATED, True, 2000),
        (AllocationChange.QUOTA, True, 4000),
        (AllocationChange.WOKEN, False, 4000),
    ]
    raised = {"cpu_millis": 4000, "memory_mib": 8192, "storage_gib": 10}
    prices = {name: ASLEEP_PRICES[name] for name in PRICE_FIELDS}
    expected = (
        HOURLY * (9 * 24 + 20)
        + ASLEEP * 4
        + hourly(**raised, prices=prices, asleep=True) * 8
        + hourly(**raised, prices=prices) * 16
    )
    assert costs(api_world)["total"] == str(expected.quantize(CENT))


# --- closed months, the card and the costs page -------------------------------------------


def test_a_closed_month_keeps_its_asleep_stretches_apart(api_world, night):
    with time_machine.travel(datetime(2026, 12, 1, 1, tzinfo=UTC), tick=False):
        before = costs(api_world, month="2026-11")
        close_due_months()
        after = costs(api_world, month="2026-11")
        [line] = totals_by_tenant([api_world.payments], month=NOVEMBER_1.date())

    rows = MonthlyCharge.objects.filter(kind="charge").order_by("charged_from")
    assert [(row.asleep, row.savings) for row in rows] == [
        (False, 0),
        (True, Decimal("0.9120000000")),
        (False, 0),
    ]
    asleep_row = rows[1]
    assert (asleep_row.charged_from, asleep_row.charged_until) == (SLEPT, WOKE)
    assert asleep_row.asleep_cpu_core_hour == Decimal("0.01")
    assert asleep_row.cost == (ASLEEP * 12).quantize(Decimal("1e-10"))
    assert after["closed"] and not before["closed"]
    for key in ("total", "asleep_hours", "savings", "days"):
        assert after[key] == before[key], key
    assert (rounded(line.savings), rounded(line.asleep_hours)) == (Decimal("0.91"), 12)


def test_the_card_gives_the_savings_and_hours_of_the_tenants_page(api_world, night, clock):
    [line] = totals_by_tenant([api_world.payments])
    page = tenant_costs(api_world.payments)

    assert rounded(line.total) == rounded(page.total)
    assert rounded(line.savings) == rounded(page.savings) == Decimal("0.91")
    assert rounded(line.asleep_hours) == rounded(page.asleep_hours) == 12


def test_the_costs_pages_show_the_hours_asleep_and_what_sleeping_saved(
    api_world, night, clock, client
):
    sleeping = namespace(api_world, "payments-shop-test", created=NOVEMBER_1)
    sleep(sleeping, at=NOW - timedelta(hours=4))  # asleep now
    client.force_login(api_world.admin)

    page = client.get("/tenants/payments/").content.decode()

    section = page[page.index('id="costs"') : page.index('id="costs-measured"')]
    saved = rounded((HOURLY - ASLEEP) * 16)
    assert f'<strong id="costs-savings">EUR {saved}</strong>' in section
    assert '<span id="costs-asleep-hours">16.0 namespace-hours</span>' in section
    assert "12.0 h asleep, saved 0.91" in section and "4.0 h asleep, saved 0.30" in section
    assert section.count('<span class="badge">asleep</span>') == 1
    overview = client.get("/costs/", {"month": "2026-11"}).content.decode()
    tenants = overview[overview.index('id="costs-by-tenant"') :]
    assert f'EUR {saved}<br><span class="muted">16.0 h asleep</span>' in tenants
    assert f"<span>Saved by sleeping</span><span>EUR {saved}</span>" in overview


def test_sleeping_adds_no_query_to_the_costs_pages(api_world, asleep_priced, clock, client):
    client.force_login(api_world.admin)
    made = [
        namespace(api_world, f"payments-a{index}-dev", created=NOVEMBER_1) for index in range(5)
    ]

    def queries() -> tuple[int, int]:
        counted = []
        for url in ("/tenants/payments/", "/costs/"):
            with CaptureQueriesContext(connection) as captured:
                assert client.get(url).status_code == 200
            counted.append(len(captured))
        return counted[0], counted[1]

    queries()
    awake = queries()
    for each in made:
        sleep(each, at=SLEPT)

    assert queries() == awake


# --- prices, the CSV and the FOCUS export --------------------------------------------------


def test_a_platform_admin_sets_the_asleep_prices_and_leaves_the_others(api_world, priced):
    response = api(api_world.admin).put(
        "/api/v1/clusters/sandbox/prices/",
        {"asleep_cpu_core_hour": "0.005", "asleep_memory_gib_hour": "0.0005"},
        format="json",
    )

    assert response.status_code == 200, response.content
    shown = api(api_world.admin).get("/api/v1/clusters/sandbox/prices/").json()
    assert (shown["asleep_cpu_core_hour"], shown["asleep_memory_gib_hour"]) == (
        "0.005000",
        "0.000500",
    )
    assert shown["cpu_core_hour"] == "0.040000"  # left out: as it stands


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"asleep_cpu_core_hour": "-1"}, "asleep_cpu_core_hour"),
        ({"asleep_cpu_core_hour": "0.0000001"}, "asleep_cpu_core_hour"),
        ({"asleep_memory_gib_hour": "lots"}, "asleep_memory_gib_hour"),
        ({"asleep_memory_gib_hour": "2000000"}, "asleep_memory_gib_hour"),
    ],
)
def test_a_bad_asleep_price_is_refused_naming_its_field(api_world, body, field):
    response = api(api_world.admin).put("/api/v1/clusters/sandbox/prices/", body, format="json")

    assert field in assert_problem(response, 400, "validation-error")["errors"]
    assert not ClusterPrice.objects.exists()
    price = ClusterPrice(cluster=Cluster.objects.get(name="sandbox"), **{field: Decimal(-1)})
    with pytest.raises(ValidationError) as refused:  # the admin site's check
        price.full_clean()
    assert field in refused.value.message_dict


def test_the_csv_says_the_hours_asleep_and_the_savings_of_each_day(api_world, night, clock, client):
    client.force_login(api_world.member)

    response = client.get("/tenants/payments/costs/", {"format": "csv", "month": "2026-11"})

    rows = {row["day"]: row for row in csv.DictReader(io.StringIO(response.content.decode()))}
    assert rows["2026-11-10"]["cost"] == str((HOURLY * 20 + ASLEEP * 4).quantize(CENT))
    assert (rows["2026-11-10"]["asleep_hours"], rows["2026-11-10"]["savings"]) == ("4.00", "0.30")
    assert (rows["2026-11-11"]["asleep_hours"], rows["2026-11-11"]["savings"]) == ("8.00", "0.61")
    assert (rows["2026-11-09"]["asleep_hours"], rows["2026-11-09"]["savings"]) == ("0.00", "0.00")


def test_the_focus_export_prices_a_stretch_asleep_at_the_asleep_prices(api_world, night, clock):
    response = api(api_world.admin).get("/api/v1/costs/focus/", {"month": "2026-11"})
    body = b"".join(response.streaming_content).decode()
    found = list(csv.DictReader(io.StringIO(body, newline="")))

    asleep = [row for row in found if row["ChargePeriodStart"] == "2026-11-10T20:00:00Z"]
    by_price = {row["SkuPriceId"]: row for row in asleep}
    assert set(by_price) == {
        "sandbox/asleep_cpu_core_hour",
        "sandbox/asleep_memory_gib_hour",
        "sandbox/storage_gib_month",
        "sandbox/namespace_month",
    }
    cpu = by_price["sandbox/asleep_cpu_core_hour"]
    assert (cpu["SkuId"], cpu["ListUnitPrice"], cpu["PricingQuantity"]) == (
        "namespace-cpu",
        "0.01",
        "24",
    )
    assert cpu["ListCost"] == cpu["BilledCost"] == "0.24"
    assert cpu["ChargeDescription"] == "2 CPU cores at 0.01 EUR per CPU core-hour asleep"
    for row in found:
        assert Decimal(row["ListUnitPrice"]) * Decimal(row["PricingQuantity"]) == Decimal(
            row["ListCost"]
        )
    billed = sum((Decimal(row["BilledCost"]) for row in found), Decimal(0))
    assert str(billed.quantize(CENT)) == costs(api_world)["total"]


def test_used_and_idle_of_hours_asleep_are_priced_at_the_asleep_prices():
    prices = tuple(ASLEEP_PRICES[name] for name in PRICE_FIELDS)
    piece = charging.Piece(7, 1, 2000, 4096, 10, "EUR", prices, SLEPT, WOKE, asleep=True)
    month = MonthUsage()

    month.add(piece, charging.days_of(SLEPT.date(), NOW.date(), UTC), {SLEPT.date(): (0.0, 0.0)})

    # Nothing ran on the 10th: its 4 hours of CPU and memory are idle, at the asleep prices.
    assert month.idle_cost == 4 * (2 * Decimal("0.01") + 4 * Decimal("0.001"))
    assert month.used_cost == 0 and month.cost == ASLEEP * 12
