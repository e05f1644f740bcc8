"""Showback: prices per cluster set by platform admins; each tenant's cost of the quota it
holds, per namespace, project, tier and day, on its page, the dashboard, the API and CSV;
measured usage from a Prometheus-compatible endpoint when one is set."""

from __future__ import annotations

import csv
import io
import json
import threading
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import time_machine
from django.core.cache import cache
from django.core.exceptions import ValidationError

from tenants.choices import NamespaceState, RequestKind, RequestState
from tenants.models import (
    AuditEvent,
    Cluster,
    ClusterPrice,
    EnvironmentTier,
    Namespace,
    Project,
    Request,
)
from tests.support.api import api, assert_problem

NOW = datetime(2026, 11, 12, 0, 0, tzinfo=UTC)
PRICES = {
    "currency": "EUR",
    "cpu_core_hour": Decimal("0.04"),
    "memory_gib_hour": Decimal("0.005"),
    "storage_gib_month": Decimal("0.10"),
    "namespace_month": Decimal("7.30"),
}
# 2 cores, 4 GiB, 10 GiB of storage and the namespace itself, per hour, at PRICES.
HOURLY = (
    2 * Decimal("0.04") + 4 * Decimal("0.005") + 10 * Decimal("0.10") / 730 + Decimal("7.30") / 730
)


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def priced(world):
    cluster = Cluster.objects.get(name="sandbox")
    ClusterPrice.objects.create(cluster=cluster, **PRICES)
    return cluster


def namespace(
    world,
    name="payments-shop-dev",
    *,
    created,
    tier="dev",
    project=None,
    state=NamespaceState.ACTIVE,
    cluster="sandbox",
    **extra,
):
    made = Namespace.objects.create(
        name=name,
        tenant=world.payments,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name=cluster),
        project=project,
        cpu_millis=2000,
        memory_mib=4096,
        storage_gib=10,
        state=state,
        **extra,
    )
    Namespace.objects.filter(pk=made.pk).update(created_at=created)
    return made


def costs(world, user=None, **query):
    response = api(user or world.member).get(f"/api/v1/tenants/{world.payments.slug}/costs/", query)
    assert response.status_code == 200, response.content[:500]
    return response.json()


# --- what a namespace costs --------------------------------------------------------------


def test_a_namespace_costs_its_quota_at_the_clusters_prices_since_it_was_made(world, priced, clock):
    namespace(world, created=NOW - timedelta(hours=48))

    answer = costs(world)

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


def test_costs_are_grouped_by_project_and_tier(world, priced, clock):
    shop = Project.objects.create(tenant=world.payments, name="shop")
    namespace(world, "payments-shop-dev", created=NOW - timedelta(hours=10), project=shop)
    namespace(
        world, "payments-shop-prod", created=NOW - timedelta(hours=10), project=shop, tier="prod"
    )
    namespace(world, "payments-tools-dev", created=NOW - timedelta(hours=10))

    answer = costs(world)

    ten_hours = str((HOURLY * 10).quantize(Decimal("0.01")))
    assert {row["name"]: row["cost"] for row in answer["projects"]} == {
        "shop": str((HOURLY * 20).quantize(Decimal("0.01"))),
        "(no project)": ten_hours,
    }
    assert {row["name"]: row["cost"] for row in answer["tiers"]}["prod"] == ten_hours


def test_a_decommissioned_namespace_costs_until_its_removal_finished(world, priced, clock):
    gone = namespace(world, created=NOW - timedelta(hours=48), state=NamespaceState.DECOMMISSIONED)
    removal = Request.objects.create(
        tenant=world.payments,
        kind=RequestKind.DECOMMISSION,
        payload={"namespace": gone.name},
        requester=world.member,
        state=RequestState.DECOMMISSIONED,
    )
    with time_machine.travel(NOW - timedelta(hours=12), tick=False):
        AuditEvent.objects.create(
            actor_label="system",
            action="request.mark_decommissioned",
            object_type="tenants.request",
            object_id=str(removal.pk),
        )

    [row] = costs(world)["namespaces"]

    assert row["month"] == str((HOURLY * 36).quantize(Decimal("0.01")))
    assert row["ended_at"].startswith("2026-11-11T12:00")


def test_a_namespace_gone_at_an_unrecorded_time_is_not_counted_and_says_so(world, priced, clock):
    namespace(world, created=NOW - timedelta(hours=48), state=NamespaceState.DECOMMISSIONED)

    answer = costs(world)

    assert answer["total"] == "0.00"
    assert answer["namespaces"] == [] or answer["namespaces"][0]["end_unknown"] is True


def test_an_ephemeral_environment_shows_what_it_costs_until_it_expires(world, priced, clock):
    namespace(
        world,
        "payments-shop-review-1",
        tier="review",
        created=NOW - timedelta(hours=1),
        expires_at=NOW + timedelta(hours=5),
    )

    [row] = costs(world)["namespaces"]

    assert row["ephemeral"] is True
    assert row["until_expiry"] == str((HOURLY * 5).quantize(Decimal("0.01")))
    assert costs(world)["until_expiry"] == row["until_expiry"]


def test_a_cluster_without_prices_is_named_and_not_counted(world, clock):
    namespace(world, created=NOW - timedelta(hours=5))

    answer = costs(world)

    assert answer["unpriced_clusters"] == ["sandbox"]
    assert answer["total"] == "0.00" and answer["namespaces"] == []


def test_an_earlier_month_is_asked_for_by_month(world, priced, clock):
    namespace(world, created=datetime(2026, 10, 31, 12, tzinfo=UTC))

    october = costs(world, month="2026-10")

    assert october["month"] == "2026-10-01"
    assert october["total"] == str((HOURLY * 12).quantize(Decimal("0.01")))


@pytest.mark.parametrize("month", ["2026-13", "november", "2026-1"])
def test_a_month_that_is_not_one_is_refused(world, month):
    response = api(world.member).get("/api/v1/tenants/payments/costs/", {"month": month})
    assert "month" in assert_problem(response, 400, "validation-error")["errors"]


# --- who sees them ------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["member", "viewer", "owner", "admin"])
def test_members_and_platform_admins_see_a_tenants_costs(world, priced, who):
    costs(world, getattr(world, who))


def test_someone_outside_the_tenant_gets_not_found(world, priced):
    response = api(world.outsider).get("/api/v1/tenants/payments/costs/")
    assert_problem(response, 404)


# --- prices: set by platform admins, every field checked -----------------------------------


def test_a_platform_admin_sets_prices_and_the_change_is_audited(world):
    response = api(world.admin).put(
        "/api/v1/clusters/sandbox/prices/",
        {"cpu_core_hour": "0.031", "currency": "USD"},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["cpu_core_hour"] == "0.031000"
    assert response.json()["currency"] == "USD"
    event = AuditEvent.objects.get(action="cluster.prices")
    assert Decimal(event.after["cpu_core_hour"]) == Decimal("0.031")
    assert event.before["currency"] == "EUR"


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
def test_a_bad_price_is_refused_naming_its_field_and_nothing_is_saved(world, body, field):
    response = api(world.admin).put("/api/v1/clusters/sandbox/prices/", body, format="json")

    assert field in assert_problem(response, 400, "validation-error")["errors"]
    assert not ClusterPrice.objects.exists()


def test_only_platform_admins_set_prices(world):
    response = api(world.owner).put(
        "/api/v1/clusters/sandbox/prices/", {"cpu_core_hour": "0"}, format="json"
    )
    assert response.status_code in (403, 404)
    assert not ClusterPrice.objects.exists()


def test_the_admin_sites_check_is_the_same(world):
    price = ClusterPrice(
        cluster=Cluster.objects.get(name="sandbox"), cpu_core_hour=Decimal("-0.5"), currency="eu"
    )
    with pytest.raises(ValidationError) as refused:
        price.full_clean()
    assert {"cpu_core_hour", "currency"} <= set(refused.value.message_dict)


# --- the tenant's page, the dashboard, CSV --------------------------------------------------


def test_the_tenants_page_shows_a_chart_and_a_table_of_its_costs(world, priced, clock, client):
    namespace(world, created=NOW - timedelta(hours=48))
    client.force_login(world.member)

    page = client.get("/tenants/payments/").content.decode()

    section = page[page.index('id="costs"') : page.index('id="costs-measured"')]
    assert f"EUR {(HOURLY * 48).quantize(Decimal('0.01'))}" in section
    assert '<svg viewBox="0 -6 340 118" class="daily-chart"' in section
    assert section.count('class="day-bar"') == 2
    assert "payments-shop-dev" in section
    assert "no Prometheus or OpenCost endpoint is configured" in page


def test_the_dashboard_lists_tenants_by_what_they_cost(world, priced, clock, client):
    namespace(world, created=NOW - timedelta(hours=48))
    client.force_login(world.admin)

    page = client.get("/dashboard/").content.decode()

    card = page[page.index('id="costs-card"') :]
    assert 'href="/tenants/payments/#costs"' in card
    assert str((HOURLY * 48).quantize(Decimal("0.01"))) in card


def test_costs_download_as_csv_one_row_per_namespace_and_day_cells_defused(
    world, priced, clock, client
):
    sneaky = Project.objects.create(tenant=world.payments, name="=HYPERLINK(evil)")
    namespace(world, created=NOW - timedelta(hours=48), project=sneaky)
    client.force_login(world.member)

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


def test_someone_outside_the_tenant_cannot_download_its_costs(world, client):
    client.force_login(world.outsider)
    assert client.get("/tenants/payments/costs/", {"format": "csv"}).status_code == 404


# --- measured usage from Prometheus ----------------------------------------------------------


class PrometheusStandIn(BaseHTTPRequestHandler):
    """Answers /api/v1/query as Prometheus does, with a vector by namespace."""

    queries: list[str] = []

    def do_GET(self):
        parts = urlsplit(self.path)
        query = parse_qs(parts.query).get("query", [""])[0]
        type(self).queries.append(query)
        value = "0.25" if "cpu" in query else "1.5"
        body = {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [
                    {"metric": {"namespace": "payments-shop-dev"}, "value": [1700000000, value]}
                ],
            },
        }
        if parts.path != "/api/v1/query":
            self.send_response(404)
            self.end_headers()
            return
        payload = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def prometheus():
    PrometheusStandIn.queries = []
    server = HTTPServer(("127.0.0.1", 0), PrometheusStandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_measured_usage_comes_from_prometheus_beside_allocation(
    world, priced, settings, prometheus, client
):
    settings.BERTH_PROMETHEUS_URL = prometheus
    namespace(world, created=datetime.now(UTC) - timedelta(hours=2))

    answer = costs(world)
    client.force_login(world.member)
    page = client.get("/tenants/payments/").content.decode()

    assert answer["measured"] == {
        "configured": True,
        "problem": "",
        "namespaces": {"payments-shop-dev": {"cpu_cores": 0.25, "memory_gib": 1.5}},
    }
    assert all(query.startswith("sum by (namespace) (") for query in PrometheusStandIn.queries)
    assert 'namespace=~"payments-shop-dev"' in PrometheusStandIn.queries[0]
    assert "0.25 cores, 1.50 GiB" in page
    assert f"Measured usage now from {prometheus}" in page


def test_the_egress_policy_applies_to_the_prometheus_url(world, priced, settings, prometheus):
    settings.BERTH_PROMETHEUS_URL = prometheus
    settings.BERTH_EGRESS_ALLOW = []
    namespace(world, created=datetime.now(UTC) - timedelta(hours=2))

    measured = costs(world)["measured"]

    assert measured["configured"] is True and measured["namespaces"] == {}
    assert "loopback" in measured["problem"] and "BERTH_EGRESS_ALLOW" in measured["problem"]
    assert PrometheusStandIn.queries == []


def test_an_endpoint_that_does_not_answer_as_prometheus_is_said_so(world, priced, settings):
    settings.BERTH_PROMETHEUS_URL = "http://127.0.0.1:9"  # nothing listens
    namespace(world, created=datetime.now(UTC) - timedelta(hours=2))

    measured = costs(world)["measured"]

    assert "did not answer" in measured["problem"]
