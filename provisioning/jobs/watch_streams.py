"""The watcher's streams: per kind, list then watch every namespace's objects labelled as
Berth's, taking up from the last version seen, backing off while the API is away, listing
again on 410 Gone or at each resync; what they did counted for the heartbeat.

A LIST comes in pages (limit / continue) handed over one by one through a bounded queue, so
a stream never holds a whole kind at 10,000 namespaces, nor runs ahead of the comparison."""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from tenacity import Retrying, retry_if_exception_type, stop_when_event_set
from tenacity.wait import wait_exponential_jitter

from provisioning.guardrails import PART_OF
from provisioning.guardrails.stamp import CHECKED_KINDS
from provisioning.kube import ClusterClient, KubeError
from provisioning.plan import MANAGED_BY

logger = logging.getLogger(__name__)

SELECTOR = f"{MANAGED_BY}=berth"


@dataclass(frozen=True)
class Timing:
    watch_seconds: int = 300  # how long one watch request lasts before it is taken up again
    resync_seconds: float = 3600.0  # a LIST per kind this often, as a safety net
    # A beat this often; a holder that stopped beating for the lease loses the cluster
    # (BERTH_WATCH_HEARTBEAT_SECONDS, BERTH_WATCH_LEASE_SECONDS: /readyz reads the same).
    heartbeat_seconds: float = field(default_factory=lambda: settings.BERTH_WATCH_HEARTBEAT_SECONDS)
    lease_seconds: float = field(default_factory=lambda: settings.BERTH_WATCH_LEASE_SECONDS)
    refresh_seconds: float = 30.0  # new and gone namespaces noticed this often
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    page_size: int = 500  # objects a LIST page holds
    queue_size: int = 4  # pages and events handed over, not yet compared, at most


@dataclass
class Figures:
    """What the streams did since the last heartbeat (added to the cluster's row)."""

    events: int = 0
    relists: int = 0
    restarts: int = 0
    lag_seconds: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, count in counts.items():
                setattr(self, name, getattr(self, name) + count)

    def take(self) -> dict[str, Any]:
        with self.lock:
            taken = {
                "events": self.events,
                "relists": self.relists,
                "restarts": self.restarts,
                "lag_seconds": self.lag_seconds,
            }
            self.events = self.relists = self.restarts = 0
            return taken

    def put_back(self, taken: dict[str, Any]) -> None:
        """What `take` gave, for a heartbeat that could not be written."""
        self.add(**{name: taken[name] for name in ("events", "relists", "restarts")})


@dataclass(frozen=True)
class Listed:
    """One page of a LIST of a kind; the first page starts a listing, the last ends it."""

    api_version: str
    kind: str
    items: list[dict[str, Any]]
    first: bool = True
    last: bool = True


@dataclass(frozen=True)
class Changed:
    api_version: str
    kind: str
    type: str  # ADDED | MODIFIED | DELETED
    obj: dict[str, Any]
    received: float


class KindStream(threading.Thread):
    """List, then watch, one kind over all namespaces, into `out`."""

    def __init__(
        self,
        client: ClusterClient,
        api_version: str,
        kind: str,
        *,
        out: queue.Queue,
        stop: threading.Event,
        figures: Figures,
        timing: Timing,
        selector: str = SELECTOR,
        watch_seconds: int | None = None,
    ) -> None:
        super().__init__(name=f"watch-{kind}", daemon=True)
        self.selector, self.watch_seconds = selector, watch_seconds or timing.watch_seconds
        self.client, self.api_version, self.kind = client, api_version, kind
        self.out, self.stop, self.figures, self.timing = out, stop, figures, timing
        self.version = ""  # the last resourceVersion seen: a reconnect takes up from here
        self.listed_at = 0.0

    def run(self) -> None:
        while not self.stop.is_set():
            retrying = Retrying(
                retry=retry_if_exception_type(Exception),
                wait=wait_exponential_jitter(
                    multiplier=self.timing.backoff_initial,
                    jitter=self.timing.backoff_initial,
                    max=self.timing.backoff_max,
                ),
                stop=stop_when_event_set(self.stop),
                sleep=self.stop.wait,
                before_sleep=self._lost,
                reraise=True,
            )
            try:
                retrying(self._once)
            except Exception:
                return

    def _lost(self, state: Any) -> None:
        self.figures.add(restarts=1)
        error = state.outcome.exception() if state.outcome else None
        logger.warning(
            "watch of %s interrupted (%s); again in %.1f s",
            self.kind,
            getattr(error, "message", error),
            state.upcoming_sleep,
        )

    def _once(self) -> None:
        """A LIST when there is no version to take up from or a resync is due, then one
        watch request until the server ends it."""
        try:
            if not self.version or time.monotonic() - self.listed_at >= self.timing.resync_seconds:
                self._list()  # a 410 here: the continue token outlived the server's history
                if not self.version:  # stopped while listing
                    return
            for event in self.client.watch(
                self.api_version,
                self.kind,
                label_selector=self.selector,
                resource_version=self.version,
                timeout_seconds=self.watch_seconds,
            ):
                obj = event.get("object") or {}
                if event["type"] == "ERROR":
                    if obj.get("code") == 410:  # the server's history moved on: list again
                        self.version = ""
                        return
                    raise KubeError(
                        obj.get("message", "watch error"), status=obj.get("code"), transient=True
                    )
                self.version = obj.get("metadata", {}).get("resourceVersion") or self.version
                if event["type"] != "BOOKMARK":
                    self.figures.add(events=1)
                    self._hand_over(
                        Changed(self.api_version, self.kind, event["type"], obj, time.monotonic())
                    )
                if self.stop.is_set():
                    return
        except KubeError as error:
            if error.status != 410:
                raise
            self.version = ""

    def _list(self) -> None:
        """The kind's LIST, page by page, each handed over as it is read. The watch takes
        up from the first page's version: a real API server serves every page from that
        one snapshot, and a server that answers later pages from newer state only makes
        the watch repeat what a later page already showed, which compares the same."""
        self.version = ""
        version = None
        for items, page_version, last in self.client.list_pages(
            self.api_version,
            self.kind,
            label_selector=self.selector,
            page_size=self.timing.page_size,
        ):
            self._hand_over(Listed(self.api_version, self.kind, items, version is None, last))
            version = page_version if version is None else version
            if self.stop.is_set():
                return
        self.figures.add(relists=1)
        self.listed_at = time.monotonic()
        self.version = version or ""

    def _hand_over(self, item: Listed | Changed) -> None:
        """Into the bounded queue, waiting while the comparison is behind, unless stopped."""
        while not self.stop.is_set():
            try:
                self.out.put(item, timeout=0.5)
                return
            except queue.Full:
                continue


def namespace_of(kind: str, obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return meta.get("name", "") if kind == "Namespace" else meta.get("namespace", "")


# What provisioning.plan.namespace_objects puts in a tenant namespace (tests hold the two
# together): one stream each.
WATCHED_KINDS = (
    ("v1", "Namespace"),
    ("v1", "ResourceQuota"),
    ("v1", "LimitRange"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
)


# Berth's guardrails on the cluster (cluster-scoped, labelled part-of=berth): watched too, so
# a binding weakened by hand is found as it happens. They change about never: one watch
# request an hour each, not one per `watch_seconds`, keeps the standing cost within budget.
GUARDRAIL_KINDS = CHECKED_KINDS
GUARDRAIL_SELECTOR = f"{PART_OF}=berth"
GUARDRAIL_WATCH_SECONDS = 3600


def streams_for(
    client: ClusterClient,
    *,
    out: queue.Queue,
    stop: threading.Event,
    figures: Figures,
    timing: Timing,
) -> list[KindStream]:
    """One stream per kind Berth puts in tenant namespaces, and one per guardrail kind."""
    common = {"out": out, "stop": stop, "figures": figures, "timing": timing}
    return [
        KindStream(client, api_version, kind, **common) for api_version, kind in WATCHED_KINDS
    ] + [
        KindStream(
            client,
            api_version,
            kind,
            **common,
            selector=GUARDRAIL_SELECTOR,
            watch_seconds=GUARDRAIL_WATCH_SECONDS,
        )
        for api_version, kind in GUARDRAIL_KINDS
    ]


def stub_of(api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any]:
    meta = {"name": name} if kind == "Namespace" else {"name": name, "namespace": namespace}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}
