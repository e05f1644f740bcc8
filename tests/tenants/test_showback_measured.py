"""Showback's measured usage, from a Prometheus-compatible endpoint when one is set: shown
beside allocation, asked only where the egress policy allows, and an endpoint that does
not answer as Prometheus does is said so.

A small stand-in answers the Prometheus HTTP API's format on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.servers import serving
from tests.support.tenants_showback import costs, namespace

# Measured usage is kept a minute (tenants.usage): each test starts from an empty cache.


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
    with serving(HTTPServer(("127.0.0.1", 0), PrometheusStandIn)) as server:
        yield f"http://127.0.0.1:{server.server_port}"


def test_measured_usage_comes_from_prometheus_beside_allocation(
    api_world, priced, settings, prometheus, client
):
    settings.BERTH_PROMETHEUS_URL = prometheus
    namespace(api_world, created=datetime.now(UTC) - timedelta(hours=2))

    answer = costs(api_world)
    client.force_login(api_world.member)
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


def test_the_egress_policy_applies_to_the_prometheus_url(api_world, priced, settings, prometheus):
    settings.BERTH_PROMETHEUS_URL = prometheus
    settings.BERTH_EGRESS_ALLOW = []
    namespace(api_world, created=datetime.now(UTC) - timedelta(hours=2))

    measured = costs(api_world)["measured"]

    assert measured["configured"] is True and measured["namespaces"] == {}
    assert "loopback" in measured["problem"] and "BERTH_EGRESS_ALLOW" in measured["problem"]
    assert PrometheusStandIn.queries == []


def test_an_endpoint_that_does_not_answer_as_prometheus_is_said_so(api_world, priced, settings):
    settings.BERTH_PROMETHEUS_URL = "http://127.0.0.1:9"  # nothing listens
    namespace(api_world, created=datetime.now(UTC) - timedelta(hours=2))

    measured = costs(api_world)["measured"]

    assert "did not answer" in measured["problem"]
