"""A stand-in for Prometheus' HTTP API on loopback, as showback's measured usage asks it
(tenants.usage): `/api/v1/query` (an instant vector) and `/api/v1/query_range` (a matrix),
by GET with the parameters in the URL or by POST form-encoded, answered in Prometheus' format.

What it answers comes from `series`: namespace → {"cpu": value, "memory": value}, in cores
and GiB (the result of Berth's sums, not raw cAdvisor samples), each value a number or a
function of the unix time giving a number or None (no sample then). A query asks about CPU
when it names container_cpu_usage_seconds_total, else memory; about the namespaces its
`namespace=~"..."` matches (anchored, as Prometheus anchors regular expressions).

A range is evaluated as Prometheus evaluates it: at `start`, then every `step`, up to and
including `end`; times as RFC 3339 or unix seconds, steps as durations (5m, 300s) or seconds.
Bad parameters are a 400 with Prometheus' error body ("bad_data"), its words included.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from tests.support.servers import serving

Value = float | Callable[[float], float | None]
MAX_POINTS = 11_000  # per series, as Prometheus refuses more
UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
DURATION = re.compile(r"(?:([0-9]+)(ms|s|m|h|d|w))+")
PART = re.compile(r"([0-9]+)(ms|s|m|h|d|w)")
MATCHER = re.compile(r'namespace=~"([^"]*)"')


class BadData(Exception):
    """A parameter Prometheus would refuse; the message is its words."""


@dataclass
class Asked:
    method: str
    path: str
    params: dict[str, str]


@dataclass
class PrometheusStandIn:
    series: dict[str, dict[str, Value]]
    asked: list[Asked] = field(default_factory=list)
    url: str = ""

    @property
    def queries(self) -> list[str]:
        return [each.params.get("query", "") for each in self.asked]

    def ranges(self) -> list[Asked]:
        return [each for each in self.asked if each.path == "/api/v1/query_range"]

    def answer(self, path: str, params: dict[str, str]) -> tuple[int, dict]:
        try:
            if path == "/api/v1/query":
                at = timestamp_ms(params["time"], "time") if "time" in params else _now_ms()
                return 200, success("vector", self._vector(params, at))
            if path == "/api/v1/query_range":
                return 200, success("matrix", self._matrix(params))
        except BadData as problem:
            return 400, {"status": "error", "errorType": "bad_data", "error": str(problem)}
        return 404, {"status": "error", "errorType": "not_found", "error": "404 page not found"}

    def _vector(self, params: dict[str, str], at: int) -> list[dict]:
        figure, names = self._asked_about(params)
        found = []
        for name in names:
            value = self._value(name, figure, at)
            if value is not None:
                found.append({"metric": {"namespace": name}, "value": [_time(at), _text(value)]})
        return found

    def _matrix(self, params: dict[str, str]) -> list[dict]:
        start = timestamp_ms(params.get("start", ""), "start")
        end = timestamp_ms(params.get("end", ""), "end")
        if end < start:
            raise BadData("end timestamp must not be before start time")
        step = duration_ms(params.get("step", ""), "step")
        if step <= 0:
            raise BadData(
                "zero or negative query resolution step widths are not accepted. "
                "Try a positive integer"
            )
        if (end - start) // step > MAX_POINTS:
            raise BadData(
                "exceeded maximum resolution of 11,000 points per timeseries. "
                "Try decreasing the query resolution (?step=XX)"
            )
        figure, names = self._asked_about(params)
        found = []
        for name in names:
            values = []
            for at in range(start, end + 1, step):
                value = self._value(name, figure, at)
                if value is not None:
                    values.append([_time(at), _text(value)])
            if values:
                found.append({"metric": {"namespace": name}, "values": values})
        return found

    def _asked_about(self, params: dict[str, str]) -> tuple[str, list[str]]:
        query = params.get("query", "")
        if not query.strip():
            raise BadData("1:1: parse error: no expression found in input")
        figure = "cpu" if "container_cpu_usage_seconds_total" in query else "memory"
        matched = MATCHER.search(query)
        pattern = re.compile(matched.group(1)) if matched else re.compile(".*")
        return figure, sorted(name for name in self.series if pattern.fullmatch(name))

    def _value(self, name: str, figure: str, at_ms: int) -> float | None:
        value = self.series[name].get(figure)
        if callable(value):
            return value(at_ms / 1000)
        return value


def success(result_type: str, result: list[dict]) -> dict:
    return {"status": "success", "data": {"resultType": result_type, "result": result}}


def timestamp_ms(text: str, name: str) -> int:
    """A time as Prometheus reads one: unix seconds (a float) or RFC 3339."""
    try:
        return round(float(text) * 1000)
    except (ValueError, OverflowError):
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise BadData(f'invalid parameter "{name}": cannot parse "{text}" to a valid timestamp')
    return round(moment.timestamp() * 1000)


def duration_ms(text: str, name: str) -> int:
    """A step as Prometheus reads one: seconds (a float) or a duration such as 5m or 1h30m."""
    try:
        return round(float(text) * 1000)
    except (ValueError, OverflowError):
        pass
    if DURATION.fullmatch(text):
        return sum(int(amount) * UNITS_MS[unit] for amount, unit in PART.findall(text))
    raise BadData(f'invalid parameter "{name}": cannot parse "{text}" to a valid duration')


def _now_ms() -> int:
    return round(time.time() * 1000)


def _time(ms: int) -> float | int:
    """Seconds as Prometheus writes a sample's time: a number, with milliseconds if any."""
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def _text(value: float) -> str:
    """A sample's value as Prometheus writes it: a string, no trailing .0."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _handler(stand_in: PrometheusStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            parts = urlsplit(self.path)
            self._answer("GET", parts.path, dict(parse_qsl(parts.query)))

        def do_POST(self):
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            params = dict(parse_qsl(parts.query))
            if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
                params.update(parse_qsl(body))
            self._answer("POST", parts.path, params)

        def _answer(self, method: str, path: str, params: dict[str, str]) -> None:
            stand_in.asked.append(Asked(method, path, params))
            status, body = stand_in.answer(path, params)
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    return Handler


@contextmanager
def prometheus_stand_in(series: dict[str, dict[str, Value]]) -> Iterator[PrometheusStandIn]:
    """The stand-in answering on 127.0.0.1 until the block ends; its address in `.url`."""
    stand_in = PrometheusStandIn(series=series)
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))) as server:
        stand_in.url = f"http://127.0.0.1:{server.server_address[1]}"
        yield stand_in
