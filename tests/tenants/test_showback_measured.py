"""Showback's measured usage, from a Prometheus-compatible endpoint when one is set: shown
beside allocation, asked only where the egress policy allows, and an endpoint that does
not answer as Prometheus does is said so.

A small stand-in answers the Prometheus HTTP API's format on 127.0.0.1
(tests/support/prometheus.py); the daily history is in test_usage_history*.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.support.tenants_showback import costs, namespace

# Measured usage is kept a minute (tenants.usage): each test starts from an empty cache.
# `prometheus` (tests/tenants/conftest.py) is the stand-in of tests/support/prometheus.py.


def test_measured_usage_comes_from_prometheus_beside_allocation(
    api_world, priced, settings, prometheus, client
):
    settings.BERTH_PROMETHEUS_URL = prometheus.url
    namespace(api_world, created=datetime.now(UTC) - timedelta(hours=2))

    answer = costs(api_world)
    client.force_login(api_world.member)
    page = client.get("/tenants/payments/").content.decode()

    assert answer["measured"] == {
        "configured": True,
        "problem": "",
        "namespaces": {"payments-shop-dev": {"cpu_cores": 0.25, "memory_gib": 1.5}},
    }
    assert all(query.startswith("sum by (namespace) (") for query in prometheus.queries)
    assert 'namespace=~"payments-shop-dev"' in prometheus.queries[0]
    assert "0.25 cores, 1.50 GiB" in page
    assert f"Measured usage now from {prometheus.url}" in page


def test_the_egress_policy_applies_to_the_prometheus_url(api_world, priced, settings, prometheus):
    settings.BERTH_PROMETHEUS_URL = prometheus.url
    settings.BERTH_EGRESS_ALLOW = []
    namespace(api_world, created=datetime.now(UTC) - timedelta(hours=2))

    measured = costs(api_world)["measured"]

    assert measured["configured"] is True and measured["namespaces"] == {}
    assert "loopback" in measured["problem"] and "BERTH_EGRESS_ALLOW" in measured["problem"]
    assert prometheus.queries == []


def test_an_endpoint_that_does_not_answer_as_prometheus_is_said_so(api_world, priced, settings):
    settings.BERTH_PROMETHEUS_URL = "http://127.0.0.1:9"  # nothing listens
    namespace(api_world, created=datetime.now(UTC) - timedelta(hours=2))

    measured = costs(api_world)["measured"]

    assert "did not answer" in measured["problem"]
