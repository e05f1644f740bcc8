"""Measured usage beside allocation (showback): CPU and memory per namespace from a
Prometheus-compatible endpoint (Prometheus, Thanos, Mimir, or OpenCost's Prometheus),
BERTH_PROMETHEUS_URL, through its HTTP API: `GET /api/v1/query` (an instant vector) for
what each namespace uses now, `/api/v1/query_range` (a matrix: the query evaluated at a fixed
step) for the daily history (tenants.services.usage_history).

The URL is the operator's, but Berth opens the connection, so the egress policy applies as
to webhooks (tenants.egress): a public https:// address, or an address the operator allows
with BERTH_EGRESS_ALLOW. Answers are kept a minute: a page shows them, it does not wait for
them every time.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlencode

import urllib3
from django.conf import settings
from django.core.cache import cache

from tenants.egress import EgressRefused, check_webhook_url, connection_pools

TIMEOUT_SECONDS = 3
KEPT_SECONDS = 60
# What each figure sums, by namespace: the cAdvisor metrics every kubelet exposes.
QUERIES = {
    "cpu_cores": "sum by (namespace) (rate(container_cpu_usage_seconds_total"
    '{{container!="",namespace=~"{names}"}}[5m]))',
    "memory_gib": "sum by (namespace) (container_memory_working_set_bytes"
    '{{container!="",namespace=~"{names}"}}) / 1073741824',
}
# The same sums over a range: CPU as the rate over each step, so the samples of a day at that
# step cover every second of it once; memory as the working set at each instant.
RANGE_QUERIES = {
    "cpu_cores": "sum by (namespace) (rate(container_cpu_usage_seconds_total"
    '{{container!="",namespace=~"{names}"}}[{step}s]))',
    "memory_gib": QUERIES["memory_gib"],
}
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# Names per range query: each answers with one series per name, so a query's answer stays
# small; a longer query than a URL should carry goes as a form (POST), as Prometheus allows.
NAMES_PER_QUERY = 50
LONGEST_URL = 2000
Samples = list[tuple[float, float]]  # (unix seconds, value), in time order


class UsageUnavailable(Exception):
    """The endpoint did not answer as Prometheus does; the message says what happened."""


@dataclass
class Measured:
    """What a page shows: `configured` false when no endpoint is set; else the figures per
    namespace, or `problem` saying why there are none."""

    configured: bool
    source: str = ""
    problem: str = ""
    by_namespace: dict[str, dict[str, float]] = field(default_factory=dict)


def endpoint() -> str:
    return (getattr(settings, "BERTH_PROMETHEUS_URL", "") or "").strip().rstrip("/")


def measured_for(namespaces: list[str]) -> Measured:
    """CPU cores and GiB of memory each namespace uses now, as the endpoint answers."""
    base = endpoint()
    if not base:
        return Measured(configured=False)
    names = sorted({name for name in namespaces if DNS_LABEL.fullmatch(name)})
    found = Measured(configured=True, source=base)
    if not names:
        return found
    key = "berth-usage:" + hashlib.sha256(json.dumps([base, names]).encode()).hexdigest()
    kept = cache.get(key)
    if kept is not None:
        found.by_namespace = kept
        return found
    try:
        for figure, query in QUERIES.items():
            for name, value in query_vector(base, query.format(names="|".join(names))).items():
                found.by_namespace.setdefault(name, {})[figure] = value
    except (UsageUnavailable, EgressRefused) as exc:
        found.problem = getattr(exc, "message", None) or str(exc)
        found.by_namespace = {}
        return found
    cache.set(key, found.by_namespace, KEPT_SECONDS)
    return found


def query_vector(base: str, query: str) -> dict[str, float]:
    """`sum by (namespace) (...)` at `base`'s /api/v1/query: namespace → value."""
    destination = check_webhook_url(f"{base}/api/v1/query?{urlencode({'query': query})}")
    data = _data(destination, _ask(destination), "vector")
    values = {}
    for sample in data["result"]:
        try:
            name = sample["metric"]["namespace"]
            values[str(name)] = float(sample["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue  # a series without a namespace, or not a number: not ours to show
    return values


def usage_over(
    base: str, names: Iterable[str], *, start: datetime, end: datetime, step: int
) -> dict[str, dict[str, Samples]]:
    """RANGE_QUERIES for `names`, evaluated every `step` seconds from `start` to `end` (both
    included, as Prometheus does): figure → namespace → samples. A name that is not a DNS
    label is not asked about; a namespace without series is left out."""
    wanted = sorted({name for name in names if DNS_LABEL.fullmatch(name)})
    found: dict[str, dict[str, Samples]] = {figure: {} for figure in RANGE_QUERIES}
    for at in range(0, len(wanted), NAMES_PER_QUERY):
        chunk = "|".join(wanted[at : at + NAMES_PER_QUERY])
        for figure, query in RANGE_QUERIES.items():
            found[figure].update(
                query_range(
                    base, query.format(names=chunk, step=step), start=start, end=end, step=step
                )
            )
    return found


def query_range(
    base: str, query: str, *, start: datetime, end: datetime, step: int
) -> dict[str, Samples]:
    """`sum by (namespace) (...)` at `base`'s /api/v1/query_range: namespace → samples. A
    sample that is not a finite number (NaN, Inf) is left out."""
    form = urlencode({"query": query, "start": _stamp(start), "end": _stamp(end), "step": step})
    url = f"{base}/api/v1/query_range"
    if len(url) + 1 + len(form) <= LONGEST_URL:
        destination = check_webhook_url(f"{url}?{form}")
        body = _ask(destination)
    else:
        destination = check_webhook_url(url)
        body = _ask(destination, form=form)
    data = _data(destination, body, "matrix")
    series: dict[str, Samples] = {}
    for each in data["result"]:
        try:
            name = str(each["metric"]["namespace"])
            pairs = [(float(at), float(value)) for at, value in each["values"]]
        except (KeyError, TypeError, ValueError):
            continue  # a series without a namespace, or not samples: not ours to count
        series[name] = [(at, value) for at, value in pairs if math.isfinite(value)]
    return series


def _stamp(moment: datetime) -> str:
    """RFC 3339 in UTC, as Prometheus reads a time."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _data(destination, body: bytes, result_type: str) -> dict:
    """The `data` of a successful answer holding a result of `result_type`; UsageUnavailable
    saying what came instead."""
    try:
        answer = json.loads(body)
    except ValueError as exc:
        raise UsageUnavailable(f"{destination.host} did not answer with JSON") from exc
    if not isinstance(answer, dict) or answer.get("status") != "success":
        error = answer.get("error") if isinstance(answer, dict) else None
        raise UsageUnavailable(
            f"{destination.host} answered with an error: {str(error or answer)[:200]}"
        )
    data = answer.get("data")
    if (
        not isinstance(data, dict)
        or data.get("resultType") != result_type
        or not isinstance(data.get("result"), list)
    ):
        shape = {"vector": "an instant vector", "matrix": "a range (matrix)"}[result_type]
        raise UsageUnavailable(f"{destination.host} did not answer with {shape}")
    return data


def _ask(destination, *, form: str | None = None) -> bytes:
    """GET (or POST `form`, form-encoded) from the first of the checked addresses that takes
    the connection."""
    headers = {"Host": destination.host_header, "Accept": "application/json"}
    if form is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    last: Exception = UsageUnavailable(f"{destination.host} has no address")
    for pool in connection_pools(destination, timeout=TIMEOUT_SECONDS):
        try:
            with pool:
                response = pool.urlopen(
                    "GET" if form is None else "POST",
                    destination.path,
                    body=form,
                    headers=headers,
                    redirect=False,
                    assert_same_host=False,
                )
        except urllib3.exceptions.HTTPError as error:
            last = error
            continue
        if response.status == 400:
            raise UsageUnavailable(_refusal(destination, response.data))
        if response.status != 200:
            raise UsageUnavailable(f"{destination.host} answered HTTP {response.status}")
        return response.data
    raise UsageUnavailable(f"{destination.host} did not answer: {last}")


def _refusal(destination, body: bytes) -> str:
    """What a 400 said: Prometheus names the parameter it could not take."""
    try:
        said = json.loads(body).get("error")
    except (ValueError, AttributeError):
        said = None
    return (
        f"{destination.host} refused the query (HTTP 400){f': {str(said)[:200]}' if said else ''}"
    )
