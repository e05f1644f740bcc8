"""Showback's usage history, collected: each day, range queries over it at a fixed step
against the Prometheus-compatible endpoint, averaged per namespace over the hours it held
quota, one row a day; collected again, the row is replaced; refused, broken or missing
endpoints store nothing and say why; beat collects yesterday and catches up the week.

The endpoint is the stand-in of tests/support/prometheus.py (`prometheus`, conftest.py).
Used against allocated per month, on the page and the API, is test_usage_history_api.py."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import time_machine
import urllib3

from tenants.models import UsageDay
from tenants.services.usage_history import collect_recent_usage, collect_usage
from tenants.tasks import collect_usage as collect_usage_task
from tests.support.servers import serving
from tests.support.tenants_showback import NOW, namespace

DAY = date(2026, 11, 10)
MIDNIGHT = datetime(2026, 11, 10, tzinfo=UTC)


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def endpoint(settings, prometheus):
    settings.BERTH_PROMETHEUS_URL = prometheus.url
    return prometheus


def rows() -> dict[str, tuple[float, float, int]]:
    return {
        row.namespace.name: (round(row.cpu_cores, 4), round(row.memory_gib, 4), row.samples)
        for row in UsageDay.objects.select_related("namespace").filter(day=DAY)
    }


def afternoon(morning: float, rest: float):
    """A value that is `morning` until noon of DAY and `rest` after."""
    noon = (MIDNIGHT + timedelta(hours=12)).timestamp()
    return lambda at: morning if at <= noon else rest


# --- what the endpoint is asked ---------------------------------------------------------------


def test_a_day_is_asked_for_at_the_fixed_step_from_one_midnight_to_the_next(
    api_world, endpoint, clock
):
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))

    collect_usage(day=DAY)

    asked = endpoint.ranges()
    assert len(asked) == 2  # CPU and memory
    for each in asked:
        assert each.params["start"] == "2026-11-10T00:05:00Z"
        assert each.params["end"] == "2026-11-11T00:00:00Z"
        assert each.params["step"] == "300"
        assert 'namespace=~"payments-shop-dev"' in each.params["query"]
    cpu = next(each.params["query"] for each in asked if "cpu" in each.params["query"])
    assert "[300s]" in cpu  # each sample's rate covers the step before it


def test_the_stand_in_evaluates_a_range_as_prometheus_does(endpoint):
    http = urllib3.PoolManager()
    answer = http.request(
        "GET",
        f"{endpoint.url}/api/v1/query_range",
        fields={
            "query": 'x{namespace=~"payments-.*"}',
            "start": "100",
            "end": "1000",
            "step": "5m",
        },
    ).json()

    [series] = answer["data"]["result"]
    assert answer["data"]["resultType"] == "matrix"
    assert [at for at, _ in series["values"]] == [100, 400, 700, 1000]  # both ends included
    assert series["values"][0][1] == "1.5"

    refused = http.request(
        "POST",
        f"{endpoint.url}/api/v1/query_range",
        fields={"query": "x", "start": "100", "end": "1000", "step": "0"},
        encode_multipart=False,
    )
    assert refused.status == 400
    assert refused.json()["errorType"] == "bad_data"
    assert "zero or negative query resolution step" in refused.json()["error"]


# --- what is stored -----------------------------------------------------------------------------


def test_a_days_averages_are_stored_per_namespace(api_world, endpoint, clock):
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))
    namespace(api_world, "payments-idle-dev", created=MIDNIGHT - timedelta(days=3))
    endpoint.series["payments-shop-dev"] = {"cpu": afternoon(1.0, 0.5), "memory": 2.0}

    outcome = collect_usage(day=DAY)

    assert outcome.stored == 2 and outcome.problem == ""
    assert rows() == {
        "payments-shop-dev": (0.75, 2.0, 288),  # 144 samples at 1 core, 144 at half of one
        "payments-idle-dev": (0.0, 0.0, 0),  # asked, and nothing of it ran
    }


def test_a_namespace_ready_at_noon_averages_over_the_hours_it_held(api_world, endpoint, clock):
    namespace(api_world, created=MIDNIGHT + timedelta(hours=12))
    endpoint.series["payments-shop-dev"] = {"cpu": afternoon(None, 0.5), "memory": 1.0}

    collect_usage(day=DAY)

    assert rows() == {"payments-shop-dev": (0.5, 1.0, 144)}


def test_collecting_a_day_again_replaces_its_row(api_world, endpoint, clock):
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))
    collect_usage(day=DAY)
    endpoint.series["payments-shop-dev"] = {"cpu": 2.0, "memory": 3.0}

    collect_usage(day=DAY)

    assert rows() == {"payments-shop-dev": (2.0, 3.0, 288)}
    assert UsageDay.objects.count() == 1


def test_many_namespaces_are_asked_about_in_parts_by_form(api_world, endpoint, clock):
    names = [f"payments-{'x' * 40}-{number:02d}" for number in range(60)]
    for name in names:
        namespace(api_world, name, created=MIDNIGHT - timedelta(days=3))
        endpoint.series[name] = {"cpu": 0.1, "memory": 0.2}

    collect_usage(day=DAY)

    assert len(rows()) == 60 and set(rows().values()) == {(0.1, 0.2, 288)}
    asked = endpoint.ranges()
    # Two parts of at most 50 names, CPU and memory each: the first too long for a URL.
    assert [each.method for each in asked] == ["POST", "POST", "GET", "GET"]


# --- when the endpoint cannot be asked ------------------------------------------------------------


def test_the_egress_policy_applies_and_nothing_is_stored(api_world, endpoint, settings, clock):
    settings.BERTH_EGRESS_ALLOW = []
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))

    outcome = collect_usage(day=DAY)

    assert "loopback" in outcome.problem and "BERTH_EGRESS_ALLOW" in outcome.problem
    assert endpoint.asked == [] and not UsageDay.objects.exists()


class NotPrometheus(BaseHTTPRequestHandler):
    """A web server that answers every path with a page."""

    def do_GET(self):
        body = b"<html><body>Welcome</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_an_endpoint_that_is_not_prometheus_is_said_so(api_world, settings, clock):
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))
    with serving(HTTPServer(("127.0.0.1", 0), NotPrometheus)) as server:
        settings.BERTH_PROMETHEUS_URL = f"http://127.0.0.1:{server.server_port}"

        outcome = collect_usage(day=DAY)

    assert outcome.problem == "127.0.0.1 did not answer with JSON"
    assert not UsageDay.objects.exists()


def test_a_step_berth_cannot_use_is_said_so(api_world, endpoint, settings, clock):
    settings.BERTH_USAGE_STEP_SECONDS = 10
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))

    outcome = collect_usage(day=DAY)

    assert outcome.problem == "BERTH_USAGE_STEP_SECONDS is 10: give 60 to 3600 seconds"
    assert endpoint.asked == [] and not UsageDay.objects.exists()


def test_without_an_endpoint_nothing_is_collected(api_world, settings, clock):
    settings.BERTH_PROMETHEUS_URL = ""
    namespace(api_world, created=MIDNIGHT - timedelta(days=3))

    assert "no endpoint is configured" in collect_usage(day=DAY).problem
    assert collect_recent_usage() == [] and not UsageDay.objects.exists()


# --- when it runs --------------------------------------------------------------------------------


def test_beat_collects_yesterday_and_the_missing_days_of_the_week_before(
    api_world, endpoint, settings, clock
):
    namespace(api_world, created=NOW - timedelta(days=30))
    collect_usage(day=date(2026, 11, 8))

    outcome = collect_usage_task()

    assert set(outcome) == {f"2026-11-{day:02d}" for day in (5, 6, 7, 9, 10, 11)}
    assert set(outcome.values()) == {"1 measured"}
    days = set(UsageDay.objects.values_list("day", flat=True))
    assert days == {date(2026, 11, day) for day in range(5, 12)}
    usage = settings.CELERY_BEAT_SCHEDULE["usage"]
    assert usage["task"] == "tenants.collect_usage"
    assert usage["schedule"].hour == {0}  # daily, just after midnight
