"""The cluster watcher: drift seen as it happens, at a standing cost that does not grow with
everything Berth has made. Per cluster, one list-then-watch stream per kind Berth puts in a
tenant namespace and per guardrail kind (jobs.watch_streams), as client-go's controllers do.
Every event is compared with the namespace's pinned plan (plan.compare); only a digest of
the fields Berth sets is kept per object. A difference is recorded within seconds and,
where the tier says so, its namespace's key reconciled through the door; a guardrail's
change has the guardrails checked by content at once; the clock's moments (grants' ends,
sleep) by jobs.watch_deadlines. One per cluster (jobs.watch_lock); /readyz reads its beats."""

from __future__ import annotations

import contextlib
import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connection

from provisioning.inputs import namespace_input
from provisioning.jobs.discovery import discover_hibernation
from provisioning.jobs.watch_deadlines import Deadlines
from provisioning.jobs.watch_lock import Lock
from provisioning.jobs.watch_streams import (
    GUARDRAIL_KINDS,
    Changed,
    Figures,
    Listed,
    Timing,
    namespace_of,
    streams_for,
    stub_of,
)
from provisioning.kube import ClusterClient, KubeError, cluster_client
from provisioning.plan import LABEL_ACCESS_GRANT, LABEL_TENANT, namespace_objects, ref_of
from provisioning.plan.compare import digest_in, object_finding, planned_digests, unexpected
from provisioning.reconcile import door
from provisioning.reconcile.guardrails import forget_checks, guardrails_problem
from provisioning.reconcile.keys import namespace_key
from provisioning.reconcile.queue import Cause, held_keys
from provisioning.records import observations
from tenants.choices import NamespaceState
from tenants.conditions import Phase
from tenants.models import Cluster, Namespace

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class NamespacePlan:
    """What the watcher keeps of one namespace: its objects' 16-byte digests, not the objects,
    and kinds' and names' strings shared between namespaces (interned)."""

    id: int
    tenant: str
    repair: bool
    objects: dict[tuple[str, str], tuple[Any, bytes]]  # (kind, name) -> (shape, digest)
    findings: dict[str, dict[str, Any]]  # object -> what is recorded for it


class ClusterWatcher:
    """Watches one cluster while it holds its lock; run() ends at `stop` or the lock's loss."""

    def __init__(self, cluster_id: int, *, holder: str, timing: Timing | None = None) -> None:
        self.cluster_id, self.holder = cluster_id, holder
        self.timing = timing or Timing()
        self.alive_at = time.monotonic()  # its last beat, or try for the lock
        self.events: queue.Queue = queue.Queue(maxsize=self.timing.queue_size)
        self.figures = Figures()
        self.plans: dict[str, NamespacePlan] = {}
        self.shapes: dict[str, Any] = {}
        self.deferred: set[tuple[str, str, str, str]] = set()
        self.relisted: list[Listed] = []  # LIST pages the database did not take, to do again
        self.listing: dict[str, set[tuple[str, str]]] = {}  # kind -> (namespace, name) listed
        self.holding = threading.Event()  # set while this watcher holds the cluster
        self.client: ClusterClient | None = None
        self.cluster_name = ""
        self.lock: Lock | None = None
        self.next_beat = 0.0
        self.deadlines = Deadlines()

    # --- the loop ---------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        lock = Lock(self.cluster_id, self.holder, self.timing)
        try:
            while not stop.is_set() and not lock.take_or_wait():
                self.alive_at = time.monotonic()
                stop.wait(self.timing.heartbeat_seconds)
            if stop.is_set():
                return
            self.holding.set()
            self.alive_at = time.monotonic()
            logger.info("watching cluster %s as %s", self.cluster_id, self.holder)
            self._watch(stop, lock)
        finally:
            self.holding.clear()
            try:
                lock.release()
            finally:
                connection.close()

    def _watch(self, stop: threading.Event, lock: Lock) -> None:
        cluster = Cluster.objects.get(pk=self.cluster_id)
        self.client, self.cluster_name = cluster_client(cluster), cluster.name
        self.lock = lock
        with contextlib.suppress(KubeError, DatabaseError):  # who carries out sleep here
            discover_hibernation(cluster)
        while not stop.is_set():  # planned before the first LIST is compared
            try:
                self._refresh()
                break
            except DatabaseError as error:  # a locked table, a failover: in a moment
                logger.warning("cluster %s: first refresh put off: %s", self.cluster_id, error)
                stop.wait(self.timing.heartbeat_seconds)
        streams_stop = threading.Event()
        streams = streams_for(
            self.client,
            out=self.events,
            stop=streams_stop,
            figures=self.figures,
            timing=self.timing,
        )
        for stream in streams:
            stream.start()
        next_refresh = time.monotonic()
        try:
            while not stop.is_set():
                now = time.monotonic()
                if not self._beat_when_due():
                    logger.warning("cluster %s: lock lost; another watcher has it", self.cluster_id)
                    return
                if now >= next_refresh:
                    next_refresh = now + self.timing.refresh_seconds
                    try:
                        self._refresh()
                        self._retry_deferred()
                        self.deadlines.note_wakes(self.cluster_id)
                    except DatabaseError as error:
                        logger.warning("cluster %s: refresh put off: %s", self.cluster_id, error)
                self.deadlines.reconcile_due(
                    cluster=self.cluster_name, worker=self.holder, replan=self._plan
                )
                try:
                    item = self.events.get(timeout=min(0.5, self.timing.heartbeat_seconds))
                except queue.Empty:  # idle: what waited (a locked table, a held key) goes on
                    if self.deferred or self.relisted:
                        with contextlib.suppress(DatabaseError):
                            self._retry_deferred()
                    continue
                try:
                    self._handle(item)
                except DatabaseError as error:
                    # Busy or away a moment (a locked table, a failover): looked at again.
                    self._defer(item)
                    logger.warning("cluster %s: an event waits: %s", self.cluster_id, error)
                except Exception:  # one namespace's trouble must not blind the others
                    logger.exception("cluster %s: an event could not be checked", self.cluster_id)
        finally:
            streams_stop.set()

    def _beat_when_due(self) -> bool:
        """A heartbeat once `heartbeat_seconds` have passed (between events, between namespaces
        planned at start: a long first refresh keeps the lease). False when the lock is lost."""
        if self.lock is None or time.monotonic() < self.next_beat:
            return True
        self.next_beat = time.monotonic() + self.timing.heartbeat_seconds
        return self._beat(self.lock)

    def _beat(self, lock: Lock) -> bool:
        alive = lock.beat(self.figures)
        if alive:
            self.alive_at = time.monotonic()
        return alive

    # --- what Berth wants there ---------------------------------------------------------

    def _refresh(self) -> None:
        """Namespaces that became active on this cluster are planned; gone ones dropped."""
        live = Namespace.objects.filter(cluster_id=self.cluster_id, state=NamespaceState.ACTIVE)
        active = dict(live.values_list("name", "pk"))
        for name in set(self.plans) - set(active):
            del self.plans[name]
            self.deadlines.forget(name)
        for name in set(active) - set(self.plans):
            self._plan(name)
            if not self._beat_when_due():
                return  # another watcher has the cluster: the loop sees it and stops

    def _plan(self, name: str) -> tuple[NamespacePlan, list[dict[str, Any]]] | None:
        """The namespace's plan as its records and pinned definition say now."""
        namespace = (
            Namespace.objects.filter(
                cluster_id=self.cluster_id, name=name, state=NamespaceState.ACTIVE
            )
            .select_related("tenant", "tier", "tier_revision", "cluster", "project", "request")
            .first()
        )
        if namespace is None:
            self.plans.pop(name, None)
            self.deadlines.forget(name)
            return None
        inputs = namespace_input(namespace)
        desired = namespace_objects(inputs, inputs.namespaces[0])
        self.deadlines.note(inputs.namespaces[0])
        plan = NamespacePlan(
            id=namespace.pk,
            tenant=sys.intern(namespace.tenant.slug),
            repair=namespace.tier.auto_repair_drift,
            objects=planned_digests(desired, self.shapes),
            findings={f["object"]: f for f in namespace.drift or []},
        )
        self.plans[name] = plan
        return plan, desired

    # --- events -----------------------------------------------------------------------

    def _handle(self, item: Listed | Changed) -> None:
        if (item.api_version, item.kind) in GUARDRAIL_KINDS:  # checked by content, at once
            if isinstance(item, Changed) or item.last:
                cluster = Cluster.objects.get(pk=self.cluster_id)
                forget_checks(cluster)
                guardrails_problem(cluster, self.client)
            return
        if isinstance(item, Listed):
            self._resync(item)
            return
        self._see(item.api_version, item.kind, item.obj, deleted=item.type == "DELETED")
        self.figures.lag_seconds = time.monotonic() - item.received

    def _resync(self, listed: Listed) -> None:
        """A page of a LIST of one kind: every object in it compared. Its last page ends the
        listing: every planned object not listed is missing, and findings of objects gone
        from it (or repaired since) are cleared."""
        if listed.first:
            self.listing[listed.kind] = set()
        seen = self.listing.setdefault(listed.kind, set())
        for obj in listed.items:  # noted first: a page the database did not take is done again
            seen.add((namespace_of(listed.kind, obj), (obj.get("metadata") or {}).get("name")))
        for obj in listed.items:
            self._see(listed.api_version, listed.kind, obj, deleted=False, resync=True)
        if not listed.last:
            return
        for name, plan in list(self.plans.items()):
            for kind, object_name in list(plan.objects):
                if kind == listed.kind and (name, object_name) not in seen:
                    self._see(
                        listed.api_version,
                        kind,
                        stub_of(listed.api_version, kind, name, object_name),
                        deleted=True,
                    )
            for ref, finding in list(plan.findings.items()):
                kind, _, rest = ref.partition("/")
                if (
                    kind == listed.kind
                    and finding["status"] == "unexpected"
                    and (name, rest.rpartition("/")[2]) not in seen
                ):
                    self._record(name, plan, ref, None)
        del self.listing[listed.kind]

    def _see(
        self,
        api_version: str,
        kind: str,
        obj: dict[str, Any],
        *,
        deleted: bool,
        resync: bool = False,
    ) -> None:
        """One object as the API has it now (or gone), against its plan."""
        meta = obj.get("metadata") or {}
        name = namespace_of(kind, obj)
        plan = self.plans.get(name)
        if plan is None:
            # Active since the last refresh (changed right after it was provisioned), or no
            # active namespace of Berth's here: the records say which.
            planned = self._plan(name) if name else None
            if planned is None:
                return
            plan = planned[0]
        ref = str(ref_of({"apiVersion": api_version, "kind": kind, "metadata": meta}))
        entry = plan.objects.get((kind, meta.get("name")))
        recorded = plan.findings.get(ref)
        if entry is not None and not deleted and digest_in(entry[0], obj) == entry[1]:
            if recorded is not None and (resync or not recorded.get("repaired")):
                # Back as planned. A repaired finding stays until the next resync says so.
                self._record(name, plan, ref, None)
            return
        if entry is None and (
            deleted
            or kind == "Namespace"
            or (meta.get("labels") or {}).get(LABEL_TENANT) != plan.tenant
        ):
            if recorded is not None:
                self._record(name, plan, ref, None)
            return
        self._confirm(name, api_version, kind, None if deleted else obj, ref)

    def _confirm(
        self, name: str, api_version: str, kind: str, live: dict[str, Any] | None, ref: str
    ) -> None:
        """A difference against the cached digests: against the records read again, recorded,
        repaired where the tier says so."""
        planned = self._plan(name)
        if planned is None:
            return
        plan, desired = planned
        meta = (live or {}).get("metadata") or {}
        later = (name, api_version, kind, meta.get("name") or ref.rsplit("/")[-1])
        if self._busy(name):
            self.deferred.add(later)
            return
        wanted = next((obj for obj in desired if str(ref_of(obj)) == ref), None)
        finding = None if live is None else unexpected(api_version, kind, live)
        if wanted is not None:
            finding = object_finding(wanted, live)
        # A repair where the tier says so; an access binding no grant holds goes always.
        ended_grant = wanted is None and LABEL_ACCESS_GRANT in meta.get("labels", {})
        if finding is not None and (ended_grant or (wanted is not None and plan.repair)):
            finding = self._repair(name, ref, finding)
            if finding is None:  # another worker is changing the namespace right now
                self.deferred.add(later)
                return
        recorded = plan.findings.get(ref)
        if finding is None and recorded is not None and recorded.get("repaired"):
            return
        self._record(name, plan, ref, finding)

    def _record(
        self, name: str, plan: NamespacePlan, ref: str, finding: dict[str, Any] | None
    ) -> None:
        if plan.findings.get(ref) == finding:
            return
        observations.record_object_drift(namespace_id=plan.id, ref=ref, finding=finding)
        if finding is None:
            plan.findings.pop(ref, None)
        else:
            plan.findings[ref] = finding
            repaired = " (repaired)" if finding.get("repaired") else ""
            logger.info("drift in %s: %s %s%s", name, ref, finding["status"], repaired)

    def _busy(self, name: str) -> bool:
        """A worker holds this namespace's key (a run, a wave, a repair): what the watch sees
        may be its write before its records follow; no other key is held up."""
        return bool(held_keys([namespace_key(self.cluster_name, name)]))

    def _repair(self, name: str, ref: str, finding: dict[str, Any]) -> dict[str, Any] | None:
        """The namespace's key reconciled for this object through the door (its checks, its
        audit event); the finding as it left it, None while another worker holds the key."""
        key = namespace_key(self.cluster_name, name)
        cause = Cause("drift", detail=f"{ref} {finding['status']}")
        result = door.run([key], cause=cause, worker=self.holder, only=frozenset({ref}))[key]
        if result.outcome.phase is Phase.BUSY:
            return None
        return next((f for f in result.findings if f["object"] == ref), finding)

    def _defer(self, item: Listed | Changed) -> None:
        if isinstance(item, Listed):
            self.relisted.append(item)
            return
        meta = item.obj.get("metadata") or {}
        name = namespace_of(item.kind, item.obj)
        self.deferred.add((name, item.api_version, item.kind, meta.get("name") or name))

    def _retry_deferred(self) -> None:
        while self.relisted:  # compared here: this thread is the queue's only reader
            self._resync(self.relisted[0])
            self.relisted.pop(0)
        for name, api_version, kind, object_name in list(self.deferred):
            plan = self.plans.get(name)
            if plan is not None and self._busy(name):
                continue
            self.deferred.discard((name, api_version, kind, object_name))
            if plan is None:
                continue
            stub = stub_of(api_version, kind, name, object_name)
            try:
                live = self.client.get(ref_of(stub))
            except KubeError as error:
                logger.warning(
                    "drift check of %s/%s deferred again: %s", kind, object_name, error.message
                )
                self.deferred.add((name, api_version, kind, object_name))
                continue
            try:
                self._see(api_version, kind, live or stub, deleted=live is None)
            except DatabaseError:
                self.deferred.add((name, api_version, kind, object_name))
                raise
