"""Measured usage beside allocation (showback): CPU and memory per namespace from a
Prometheus-compatible endpoint (Prometheus, Thanos, Mimir, or OpenCost's Prometheus),
BERTH_PROMETHEUS_URL, through its HTTP API (`GET /api/v1/query`, an instant vector).

The URL is the operator's, but Berth opens the connection, so the egress policy applies as
to webhooks (tenants.egress): a public https:// address, or an address the operator allows
with BERTH_EGRESS_ALLOW. Answers are kept a minute: a page shows them, it does not wait for
them every time.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
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
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


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
    body = _get(destination)
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
        or data.get("resultType") != "vector"
        or not isinstance(data.get("result"), list)
    ):
        raise UsageUnavailable(f"{destination.host} did not answer with an instant vector")
    values = {}
    for sample in data["result"]:
        try:
            name = sample["metric"]["namespace"]
            values[str(name)] = float(sample["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue  # a series without a namespace, or not a number: not ours to show
    return values


def _get(destination) -> bytes:
    """GET from the first of the checked addresses that takes the connection."""
    last: Exception = UsageUnavailable(f"{destination.host} has no address")
    for pool in connection_pools(destination, timeout=TIMEOUT_SECONDS):
        try:
            with pool:
                response = pool.urlopen(
                    "GET",
                    destination.path,
                    headers={"Host": destination.host_header, "Accept": "application/json"},
                    redirect=False,
                    assert_same_host=False,
                )
        except urllib3.exceptions.HTTPError as error:
            last = error
            continue
        if response.status != 200:
            raise UsageUnavailable(f"{destination.host} answered HTTP {response.status}")
        return response.data
    raise UsageUnavailable(f"{destination.host} did not answer: {last}")
