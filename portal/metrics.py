"""Prometheus metrics: `GET /metrics` on the web app, and optionally a worker's own port.

What is measured where:

- observed in the process where it happens, kept in prometheus_client's multiprocess
  files (`PROMETHEUS_MULTIPROC_DIR`, the data dir's `prometheus/` unless set), so every
  gunicorn worker and every Celery worker process adds to the same figures:
  `berth_http_request_duration_seconds{view,method,status}` (this module's middleware;
  /metrics, /healthz and /readyz are left out: scrapes and probes every few seconds would
  drown the pages people use), `berth_provisioning_duration_seconds{outcome}` (a run's
  start to finish, observed when it ends ready or failed) and
  `berth_git_push_failures_total` (counted when the engine sends `git_push_failed`) and
  `berth_throttle_cache_failures_total` (API requests let through when the rate limiter's
  cache was down);
- read from the database and the broker at scrape time, so they are right however many
  processes there are: `berth_requests{state}`, `berth_queue_depth{queue}`,
  `berth_drifted_namespaces`, `berth_drift_findings` and `berth_truth_objects{state}`;
  and the drift watcher's, which it keeps in its cluster's row as it beats:
  `berth_watch_events_total`, `berth_watch_relists_total`, `berth_watch_restarts_total`,
  `berth_watch_lag_seconds` and `berth_watch_heartbeat_age_seconds`, by cluster.

The web app and the Celery workers see the same multiprocess directory when they share the
data dir (`make run`, docker compose). Where they do not (Kubernetes: one emptyDir per pod),
a worker serves its own figures on `BERTH_WORKER_METRICS_PORT`.

`/metrics` needs `Authorization: Bearer <BERTH_METRICS_TOKEN>` when that is set, and is
open otherwise.
"""

from __future__ import annotations

import functools
import hmac
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from celery import signals as celery_signals
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
    values,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from provisioning.signals import git_push_failed
from tenants.signals import request_state_changed, throttle_cache_failed

logger = logging.getLogger(__name__)

# Views whose latency is not recorded: machines call them every few seconds.
UNMEASURED_VIEWS = frozenset({"metrics", "healthz", "readyz"})
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
PROVISIONING_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600)
FINISHED_ACTIONS = {"mark_ready": "ready", "mark_failed": "failed"}
# kombu's Redis transport keeps messages of priority p > 0 in "<queue>\x06\x16<p>".
REDIS_PRIORITY_SEPARATOR = "\x06\x16"
REDIS_PRIORITY_STEPS = (0, 3, 6, 9)


@dataclass(frozen=True)
class Instruments:
    http_latency: Histogram
    provisioning_duration: Histogram
    git_push_failures: Counter
    throttle_cache_failures: Counter


@functools.cache
def instruments() -> Instruments:
    """Made on first use, so only processes that measure something leave multiprocess files
    (not every `manage.py` or `celery inspect` a healthcheck runs)."""
    return Instruments(
        http_latency=Histogram(
            "berth_http_request_duration_seconds",
            "Time to answer an HTTP request, by view name, method and status code.",
            ["view", "method", "status"],
            buckets=HTTP_BUCKETS,
            registry=None,
        ),
        provisioning_duration=Histogram(
            "berth_provisioning_duration_seconds",
            "Time from the start of a provisioning run to its end, by outcome (ready, failed).",
            ["outcome"],
            buckets=PROVISIONING_BUCKETS,
            registry=None,
        ),
        git_push_failures=Counter(
            "berth_git_push_failures",
            "Pushes to a tenant's GitOps repository that failed.",
            registry=None,
        ),
        throttle_cache_failures=Counter(
            "berth_throttle_cache_failures",
            "API requests let through unthrottled because the rate limiter's cache failed.",
            registry=None,
        ),
    )


def _shared_across_processes() -> bool:
    # prometheus_client picks multiprocess values at import, from PROMETHEUS_MULTIPROC_DIR.
    return values.ValueClass is not values.MutexValue and bool(
        os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    )


def observed_registry() -> CollectorRegistry:
    """Everything observed in any process that shares this one's multiprocess directory."""
    registry = CollectorRegistry()
    if _shared_across_processes():
        multiprocess.MultiProcessCollector(registry)
    else:  # a process that imported prometheus_client before the settings: only its own
        made = instruments()
        for metric in (
            made.http_latency,
            made.provisioning_duration,
            made.git_push_failures,
            made.throttle_cache_failures,
        ):
            registry.register(metric)
    return registry


# --- figures read at scrape time ---------------------------------------------------------


def queue_depth(queue: str) -> int:
    """Messages waiting in the broker for `queue` (not those a worker has taken)."""
    if settings.REDIS_URL:
        client = _redis(settings.REDIS_URL)
        keys = [
            f"{queue}{REDIS_PRIORITY_SEPARATOR}{step}" if step else queue
            for step in REDIS_PRIORITY_STEPS
        ]
        with client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.llen(key)
            return sum(pipe.execute())
    folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in", "")
    if not folder or not os.path.isdir(folder):
        return 0
    # kombu's filesystem transport names messages "<time>_<uuid>.<queue>.msg".
    suffix = f"{queue}.msg"
    return sum(1 for name in os.listdir(folder) if name.partition(".")[2] == suffix)


@functools.cache
def _redis(url: str):
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


class StateCollector(Collector):
    """Figures that are facts in the database or the broker, read when Prometheus scrapes."""

    def collect(self) -> Iterator[Metric]:
        for family in (self._requests, self._drift, self._truth, self._queue, self._watch):
            try:
                yield from family()
            except Exception as error:
                logger.warning("metrics: %s could not be read: %s", family.__name__[1:], error)

    @staticmethod
    def _requests() -> Iterator[Metric]:
        from django.db.models import Count

        from tenants.choices import RequestState
        from tenants.models import Request

        counts = dict.fromkeys(RequestState.values, 0)
        for row in Request.objects.order_by().values("state").annotate(n=Count("id")):
            counts[row["state"]] = row["n"]
        family = GaugeMetricFamily(
            "berth_requests", "Tenancy requests in each state.", labels=["state"]
        )
        for state, count in sorted(counts.items()):
            family.add_metric([state], count)
        yield family

    @staticmethod
    def _drift() -> Iterator[Metric]:
        from tenants.choices import NamespaceState
        from tenants.models import Namespace

        findings = list(
            Namespace.objects.filter(state=NamespaceState.ACTIVE)
            .exclude(drift=[])
            .values_list("drift", flat=True)
        )
        drifted = [drift for drift in findings if drift]
        yield GaugeMetricFamily(
            "berth_drifted_namespaces",
            "Active namespaces whose last reconcile found drift.",
            value=len(drifted),
        )
        yield GaugeMetricFamily(
            "berth_drift_findings",
            "Drift findings (missing, changed, unexpected objects) over all active namespaces.",
            value=sum(len(drift) for drift in drifted),
        )

    @staticmethod
    def _truth() -> Iterator[Metric]:
        from tenants.models import TruthTable

        states = ("in_sync", "drifted", "missing_in_git", "missing_in_cluster", "orphan")
        totals = dict.fromkeys(states, 0)
        for counts in TruthTable.objects.values_list("counts", flat=True):
            for state, count in (counts or {}).items():
                totals[state] = totals.get(state, 0) + count
        family = GaugeMetricFamily(
            "berth_truth_objects",
            "Objects in each state of the tenants' last truth tables (database, repository, "
            "cluster compared).",
            labels=["state"],
        )
        for state, count in totals.items():
            family.add_metric([state], count)
        yield family

    @staticmethod
    def _watch() -> Iterator[Metric]:
        """The drift watcher's figures, kept in its cluster's row (it runs in a process, on
        Kubernetes a pod, of its own): counters since the cluster was first watched."""
        from django.utils import timezone

        from provisioning.models import ClusterWatch

        rows = list(
            ClusterWatch.objects.values_list(
                "cluster__name", "events", "relists", "restarts", "lag_seconds", "heartbeat_at"
            )
        )
        families = {
            "events": CounterMetricFamily(
                "berth_watch_events", "Watch events the drift watcher compared.", labels=["cluster"]
            ),
            "relists": CounterMetricFamily(
                "berth_watch_relists",
                "Full LISTs of a kind: at start, after 410 Gone, and the hourly resync.",
                labels=["cluster"],
            ),
            "restarts": CounterMetricFamily(
                "berth_watch_restarts",
                "Watch streams interrupted (API outage, dropped connection) and taken up again.",
                labels=["cluster"],
            ),
            "lag": GaugeMetricFamily(
                "berth_watch_lag_seconds",
                "From an event's arrival to its comparison, the last one.",
                labels=["cluster"],
            ),
            "age": GaugeMetricFamily(
                "berth_watch_heartbeat_age_seconds",
                "Since the cluster's watcher last beat.",
                labels=["cluster"],
            ),
        }
        now = timezone.now()
        for cluster, events, relists, restarts, lag, beat in rows:
            families["events"].add_metric([cluster], events)
            families["relists"].add_metric([cluster], relists)
            families["restarts"].add_metric([cluster], restarts)
            families["lag"].add_metric([cluster], lag)
            if beat is not None:
                families["age"].add_metric([cluster], (now - beat).total_seconds())
        yield from families.values()

    @staticmethod
    def _queue() -> Iterator[Metric]:
        queue = settings.CELERY_TASK_DEFAULT_QUEUE
        family = GaugeMetricFamily(
            "berth_queue_depth", "Messages waiting in the broker queue.", labels=["queue"]
        )
        family.add_metric([queue], queue_depth(queue))
        yield family


# --- the endpoint ------------------------------------------------------------------------


def _authorized(request: HttpRequest, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode()
    )


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if token and not _authorized(request, token):
        response = HttpResponse("Unauthorized: send Authorization: Bearer <token>\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="berth-metrics"'
        response["Content-Type"] = "text/plain"
        return response
    instruments()  # this process's zero-valued series (git push failures) are shown too
    registry = observed_registry()
    registry.register(StateCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


class RequestMetricsMiddleware:
    """Records each request's latency under its view name (bounded label values)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match:
            view = match.view_name
        elif request.path.startswith("/" + settings.STATIC_URL.lstrip("/")):
            view = "static"  # answered by WhiteNoise before any URL is resolved
        else:
            view = "unmatched"  # 404s: one series for all of them
        if view not in UNMEASURED_VIEWS:
            method = request.method if request.method in HTTP_METHODS else "other"
            instruments().http_latency.labels(view, method, str(response.status_code)).observe(
                time.perf_counter() - started
            )
        return response


# --- provisioning runs -------------------------------------------------------------------


def _request_state_changed(
    sender,
    *,
    request_ids: list[int],
    action: str,
    **_: object,
) -> None:
    """Each finished request's provisioning time: its last run's, in one query for all."""
    outcome = FINISHED_ACTIONS.get(action)
    if outcome is None:
        return
    from tenants.models import Run

    timed = set()
    for request_id, started_at, finished_at in (
        Run.objects.filter(request_id__in=request_ids, finished_at__isnull=False)
        .order_by("request_id", "-finished_at", "-id")
        .values_list("request_id", "started_at", "finished_at")
    ):
        if request_id not in timed:
            timed.add(request_id)
            seconds = max((finished_at - started_at).total_seconds(), 0.0)
            instruments().provisioning_duration.labels(outcome).observe(seconds)


def _git_push_failed(sender, **_: object) -> None:
    instruments().git_push_failures.inc()


def _throttle_cache_failed(sender, **_: object) -> None:
    instruments().throttle_cache_failures.inc()


def connect() -> None:
    """Called from PortalConfig.ready."""
    from tenants.models import Request

    request_state_changed.connect(
        _request_state_changed, sender=Request, dispatch_uid="berth-metrics-provisioning"
    )
    git_push_failed.connect(_git_push_failed, dispatch_uid="berth-metrics-git-push")
    throttle_cache_failed.connect(_throttle_cache_failed, dispatch_uid="berth-metrics-throttle")


# --- a Celery worker's own endpoint ------------------------------------------------------


@celery_signals.worker_ready.connect(weak=False)
def _serve_worker_metrics(**_: object) -> None:
    port = getattr(settings, "WORKER_METRICS_PORT", 0)
    if not port:
        return
    instruments()  # the zero-valued series (git push failures) from the start
    start_http_server(port, registry=observed_registry())
    logger.info("worker metrics on :%s/metrics", port)
