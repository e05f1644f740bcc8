"""Showback: prices per cluster set by platform admins; each tenant's cost of the quota it
holds, per namespace, project, tier and day, on its page, the dashboard, the API and CSV.
Measured usage is in test_showback_measured.py."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core.exceptions import ValidationError

from tenants.choices import NamespaceState
from tenants.models import AuditEvent, Cluster, ClusterPrice, Project
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import HOURLY, NOW, costs, namespace, removed

# Measured usage is kept a minute (tenants.usage): each test starts from an empty cache.


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


# --- what a namespace costs --------------------------------------------------------------


def test_a_namespace_costs_its_quota_at_the_clusters_prices_since_it_was_made(
    api_world, priced, clock
):
    namespace(api_world, created=NOW - timedelta(hours=48))

    answer = costs(api_world)

    expected = (HOURLY * 48).quantize(Decimal("0.01"))
    assert answer["total"] == str(expected)
    [row] = answer["namespaces"]
    assert row["per_day"] == str((HOURLY * 24).quantize(Decimal("0.01")))
    assert (
        answer["days"]["2026-11-10"]
        == answer["days"]["2026-11-11"]
        == str((HOURLY * 24).quantize(Decimal("0.01")))
    )
    assert answer["days"]["2026-11-12"] == "0.00" and answer["currency"] == "EUR"


def test_costs_are_grouped_by_project_and_tier(api_world, priced, clock):
    shop = Project.objects.create(tenant=api_world.payments, name="shop")
    namespace(api_world, "payments-shop-dev", created=NOW - timedelta(hours=10), project=shop)
    namespace(
        api_world,
        "payments-shop-prod",
        created=NOW - timedelta(hours=10),
        project=shop,
        tier="prod",
    )
    namespace(api_world, "payments-tools-dev", created=NOW - timedelta(hours=10))

    answer = costs(api_world)

    ten_hours = str((HOURLY * 10).quantize(Decimal("0.01")))
    assert {row["name"]: row["cost"] for row in answer["projects"]} == {
        "shop": str((HOURLY * 20).quantize(Decimal("0.01"))),
        "(no project)": ten_hours,
    }
    assert {row["name"]: row["cost"] for row in answer["tiers"]}["prod"] == ten_hours


def test_a_decommissioned_namespace_costs_until_its_removal_finished(api_world, priced, clock):
    gone = namespace(
        api_world, created=NOW - timedelta(hours=48), state=NamespaceState.DECOMMISSIONED
    )
    removed(api_world, gone, finished=NOW - timedelta(hours=12))

    [row] = costs(api_world)["namespaces"]

    assert row["month"] == str((HOURLY * 36).quantize(Decimal("0.01")))
    assert row["ended_at"].startswith("2026-11-11T12:00")


def test_an_ephemeral_environment_shows_what_it_costs_until_it_expires(api_world, priced, clock):
    namespace(
        api_world,
        "payments-shop-review-1",
        tier="review",
        created=NOW - timedelta(hours=1),
        expires_at=NOW + timedelta(hours=5),
    )

    [row] = costs(api_world)["namespaces"]

    assert row["ephemeral"] is True
    assert row["until_expiry"] == str((HOURLY * 5).quantize(Decimal("0.01")))
    assert costs(api_world)["until_expiry"] == row["until_expiry"]


def test_a_cluster_without_prices_is_named_and_not_counted(api_world, clock):
    namespace(api_world, created=NOW - timedelta(hours=5))

    answer = costs(api_world)

    assert answer["unpriced_clusters"] == ["sandbox"]
    assert answer["total"] == "0.00" and answer["namespaces"] == []


def test_an_earlier_month_is_asked_for_by_month(api_world, priced, clock):
    namespace(api_world, created=datetime(2026, 10, 31, 12, tzinfo=UTC))

    october = costs(api_world, month="2026-10")

    assert october["month"] == "2026-10-01"
    assert october["total"] == str((HOURLY * 12).quantize(Decimal("0.01")))


@pytest.mark.parametrize("month", ["2026-13", "november", "2026-1"])
def test_a_month_that_is_not_one_is_refused(api_world, month):
    response = api(api_world.member).get("/api/v1/tenants/payments/costs/", {"month": month})
    assert "month" in assert_problem(response, 400, "validation-error")["errors"]


# --- who sees them ------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["member", "viewer", "owner", "admin"])
def test_members_and_platform_admins_see_a_tenants_costs(api_world, priced, who):
    costs(api_world, getattr(api_world, who))


def test_someone_outside_the_tenant_gets_not_found(api_world, priced):
    response = api(api_world.outsider).get("/api/v1/tenants/payments/costs/")
    assert_problem(response, 404)


# --- prices: set by platform admins, every field checked -----------------------------------


def test_a_platform_admin_sets_prices_and_the_change_is_audited(api_world):
    response = api(api_world.admin).put(
        "/api/v1/clusters/sandbox/prices/",
        {"cpu_core_hour": "0.031", "currency": "USD"},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["cpu_core_hour"] == "0.031000"
    assert response.json()["currency"] == "USD"
    event = AuditEvent.objects.get(action="cluster.prices")
    assert Decimal(event.after["cpu_core_hour"]) == Decimal("0.031")
    assert event.before == {}  # the cluster's first prices


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"cpu_core_hour": "-1"}, "cpu_core_hour"),
        ({"memory_gib_hour": "0.0000001"}, "memory_gib_hour"),
        ({"storage_gib_month": "lots"}, "storage_gib_month"),
        ({"namespace_month": "1e9"}, "namespace_month"),
        ({"currency": "eur"}, "currency"),
        ({"currency": "EURO"}, "currency"),
        ({"gpu_hour": "1"}, "gpu_hour"),
    ],
)
def test_a_bad_price_is_refused_naming_its_field_and_nothing_is_saved(api_world, body, field):
    response = api(api_world.admin).put("/api/v1/clusters/sandbox/prices/", body, format="json")

    assert field in assert_problem(response, 400, "validation-error")["errors"]
    assert not ClusterPrice.objects.exists()


def test_only_platform_admins_set_prices(api_world):
    response = api(api_world.owner).put(
        "/api/v1/clusters/sandbox/prices/", {"cpu_core_hour": "0"}, format="json"
    )
    assert response.status_code in (403, 404)
    assert not ClusterPrice.objects.exists()


def test_the_admin_sites_check_is_the_same(api_world):
    price = ClusterPrice(
        cluster=Cluster.objects.get(name="sandbox"), cpu_core_hour=Decimal("-0.5"), currency="eu"
    )
    with pytest.raises(ValidationError) as refused:
        price.full_clean()
    assert {"cpu_core_hour", "currency"} <= set(refused.value.message_dict)


# --- the tenant's page, the dashboard, CSV --------------------------------------------------


def test_the_tenants_page_shows_a_chart_and_a_table_of_its_costs(api_world, priced, clock, client):
    namespace(api_world, created=NOW - timedelta(hours=48))
    client.force_login(api_world.member)

    page = client.get("/tenants/payments/").content.decode()

    section = page[page.index('id="costs"') : page.index('id="costs-measured"')]
    assert f"EUR {(HOURLY * 48).quantize(Decimal('0.01'))}" in section
    assert '<svg viewBox="0 -6 340 118" class="daily-chart"' in section
    assert section.count('class="day-bar"') == 2
    assert "payments-shop-dev" in section
    assert "no Prometheus or OpenCost endpoint is configured" in page


def test_the_dashboard_lists_tenants_by_what_they_cost(api_world, priced, clock, client):
    namespace(api_world, created=NOW - timedelta(hours=48))
    client.force_login(api_world.admin)

    page = client.get("/dashboard/").content.decode()

    card = page[page.index('id="costs-card"') :]
    assert 'href="/tenants/payments/#costs"' in card
    assert str((HOURLY * 48).quantize(Decimal("0.01"))) in card


def test_costs_download_as_csv_one_row_per_namespace_and_day_cells_defused(
    api_world, priced, clock, client
):
    sneaky = Project.objects.create(tenant=api_world.payments, name="=HYPERLINK(evil)")
    namespace(api_world, created=NOW - timedelta(hours=48), project=sneaky)
    client.force_login(api_world.member)

    response = client.get("/tenants/payments/costs/", {"format": "csv", "month": "2026-11"})

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response["Content-Type"] == "text/csv"
    assert [row["day"] for row in rows] == ["2026-11-10", "2026-11-11"]
    assert rows[0]["cost"] == str((HOURLY * 24).quantize(Decimal("0.01")))
    assert rows[0]["project"] == "'=HYPERLINK(evil)"
    assert (
        client.get("/tenants/payments/costs/", {"format": "csv", "month": "soon"}).status_code
        == 400
    )


def test_someone_outside_the_tenant_cannot_download_its_costs(api_world, client):
    client.force_login(api_world.outsider)
    assert client.get("/tenants/payments/costs/", {"format": "csv"}).status_code == 404
