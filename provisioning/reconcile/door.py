"""The door: how every source of change reaches a cluster or a repository. A source
enqueues keys with its cause (`enqueue`), or, when it wants the outcome now, reconciles
them in its own worker through the same queue (`run`): either way a key is reconciled by
one worker at a time, by the one reconcile of its kind, and requeued with backoff while it
waits. Requests' runs hold the keys their plans change (runs.py), so what the watcher sees
of those keys meanwhile is deferred, and only of those."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from celery import current_app
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from provisioning.reconcile import queue
from provisioning.reconcile.keys import (
    GRANT,
    NAMESPACE,
    SLEEP,
    Key,
    grant_key,
    namespace_key,
    sleep_key,
)
from provisioning.reconcile.namespace import reconcile_namespace
from provisioning.reconcile.queue import Cause, Claim
from tenants.choices import NamespaceState, RequestState
from tenants.conditions import Outcome, Phase, Reason, busy, idle, waiting
from tenants.models import AccessGrant, Namespace, Request
from tenants.selectors.sleep import sleep_status

logger = logging.getLogger(__name__)

DRAIN_TASK = "provisioning.reconcile_keys"
WORKING = (RequestState.APPROVED, RequestState.PROVISIONING)


@dataclass(frozen=True)
class Reconciled:
    outcome: Outcome
    findings: list[dict[str, Any]] = field(default_factory=list)


def enqueue(keys: list[Key], *, cause: Cause, delay: float = 0.0) -> None:
    """Queue the keys; a worker drains them once this transaction commits."""
    queue.add(keys, cause=cause, delay=delay)
    transaction.on_commit(lambda: _drain_later(delay))


def run(
    keys: list[Key], *, cause: Cause, worker: str, only: frozenset[str] = frozenset()
) -> dict[Key, Reconciled]:
    """Reconcile the keys now, in this worker: those another worker holds stay queued with
    this cause (Busy), and are reconciled after it."""
    got, held = queue.claim(keys, worker=worker, cause=cause)
    results = {key: Reconciled(busy(f"{key} is being changed by another worker")) for key in held}
    for claim in got:
        results[claim.key] = _reconcile_claimed(claim, worker=worker, only=only)
    return results


def drain(*, worker: str, limit: int = 100) -> dict[Key, Outcome]:
    """The queue's due keys, each reconciled (what the task does)."""
    done: dict[Key, Outcome] = {}
    while len(done) < limit:
        claims = queue.claim_due(worker=worker, limit=min(20, limit - len(done)))
        if not claims:
            break
        for claim in claims:
            done[claim.key] = _reconcile_claimed(claim, worker=worker).outcome
    return done


def reconcile(
    claim: Claim, *, worker: str = "door", only: frozenset[str] = frozenset()
) -> Reconciled:
    """The one reconcile of a key, by its kind."""
    if claim.key.kind == NAMESPACE:
        outcome, findings = reconcile_namespace(claim.key, claim.causes, only=only)
        return Reconciled(outcome, findings)
    if claim.key.kind == GRANT:
        return Reconciled(_end_of_grant(claim.key, worker=worker))
    if claim.key.kind == SLEEP:
        return Reconciled(_sleep_moment(claim, worker=worker))
    return Reconciled(_carried_by_requests(claim.key))


def _end_of_grant(key: Key, *, worker: str) -> Outcome:
    """A grant's time is up (or it was revoked): its namespace's key reconciled, which
    removes its binding. Before its end it waits for it; while another worker holds the
    namespace, a moment."""
    grant = AccessGrant.objects.select_related("namespace").filter(pk=int(key.name)).first()
    if grant is None or grant.ended_at is not None:
        return idle("the grant has ended")
    now = timezone.now()
    if grant.revoked_at is None and grant.expires_at is not None and grant.expires_at > now:
        return waiting(Reason.NOTHING, "the grant has not ended yet", grant.expires_at)
    namespace = namespace_key(key.cluster, grant.namespace.name)
    cause = Cause("grant", grant.pk, detail="expired")
    done = run([namespace], cause=cause, worker=worker)[namespace].outcome
    if done.phase is Phase.BUSY:
        return waiting(Reason.KEY_BUSY, done.message, now + timedelta(seconds=5))
    return done


def _sleep_moment(claim: Claim, *, worker: str) -> Outcome:
    """A namespace's sleep schedule: its key reconciled now (a scheduled moment, a wake, a
    new schedule), then this key waits for the next moment; gone with the schedule."""
    key = claim.key
    namespace = (
        Namespace.objects.filter(cluster__name=key.cluster, name=key.name)
        .exclude(state=NamespaceState.DECOMMISSIONED)
        .select_related("tier", "cluster")
        .first()
    )
    if namespace is None:
        return idle("no such namespace")
    target = namespace_key(key.cluster, key.name)
    causes = [cause for cause in claim.causes if cause.kind in ("sleep", "wake")]
    done = run([target], cause=causes[-1] if causes else Cause("sleep"), worker=worker)[target]
    now = timezone.now()
    if done.outcome.phase is Phase.BUSY:
        return waiting(Reason.KEY_BUSY, done.outcome.message, now + timedelta(seconds=5))
    if done.outcome.phase is Phase.WAITING:
        return done.outcome
    status = sleep_status(namespace, now)
    if status.next_change is None:
        return idle("no moment ahead")
    said = "wakes" if status.wants_asleep else "sleeps"
    return waiting(
        Reason.NOTHING,
        f"{key.name} {said} next at {status.next_change.isoformat()}",
        status.next_change,
    )


def settle_sleep(namespaces: list[Namespace], *, cause: Cause, changed: bool = False) -> None:
    """These namespaces' sleep settled now, and their schedules followed from here on: those
    with a schedule or asleep, or all of them when their schedules `changed`."""
    keys = [
        sleep_key(ns.cluster.name, ns.name)
        for ns in namespaces
        if changed or ns.sleeps() or ns.asleep
    ]
    if keys:
        enqueue(keys, cause=cause)


def namespaces_of_requests(request_ids: list[int]) -> list[Namespace]:
    """The live namespaces these requests made or name in their payloads."""
    named = [
        (payload.get("cluster", ""), payload.get("namespace", ""))
        for payload in Request.objects.filter(pk__in=request_ids).values_list("payload", flat=True)
    ]
    made = Q(request_id__in=request_ids)
    for cluster, name in named:
        if name:
            made |= Q(cluster__name=cluster, name=name)
    return list(
        Namespace.objects.filter(made, state=NamespaceState.ACTIVE).select_related(
            "tier", "cluster"
        )
    )


def _reconcile_claimed(
    claim: Claim, *, worker: str, only: frozenset[str] = frozenset()
) -> Reconciled:
    try:
        result = reconcile(claim, worker=worker, only=only)
    except BaseException as error:
        queue.retry(claim, worker=worker, at=None, error=f"{type(error).__name__}: {error}")
        raise
    if result.outcome.phase is Phase.WAITING:
        at = queue.retry(
            claim, worker=worker, at=result.outcome.retry_at, error=result.outcome.message
        )
        _drain_later((at - timezone.now()).total_seconds())
    else:
        queue.done(claim, worker=worker)
    if result.outcome.phase is not Phase.IDLE:
        logger.info("%s: %s", claim.key, result.outcome)
    return result


def _carried_by_requests(key: Key) -> Outcome:
    """A tenant's objects on a cluster and its repository change only as a request says:
    the request runs carry them (holding the key); a stalled one is handed out again."""
    waiting = Request.objects.filter(
        tenant__slug=key.name, state__in=WORKING, lease_expires_at__isnull=True
    )
    if key.cluster:
        waiting = waiting.filter(payload__cluster=key.cluster)
    stalled = list(waiting.values_list("pk", flat=True))
    if stalled:
        for request_id in stalled:
            _send("provisioning.converge", request_id)
        return idle(f"handed to the runs of request(s) {', '.join(map(str, stalled))}")
    return idle("no change of it outstanding")


def _drain_later(delay: float) -> None:
    _send(DRAIN_TASK, countdown=max(0.0, delay))


def _send(name: str, *args: object, countdown: float = 0.0) -> None:
    """Through the task registry (the tasks import this module); when the broker is down,
    the sweep finds the work again."""
    try:
        task = current_app.tasks[name]
        if countdown:
            task.apply_async(args, countdown=countdown)
        else:
            task.delay(*args)
    except Exception as error:  # the database holds the work: nothing is lost
        logger.warning("broker unavailable, %s not queued (%s)", name, type(error).__name__)


def sweep_namespace(namespace: Namespace, *, worker: str = "sweep") -> list[dict[str, Any]]:
    """Beat's sweep of one namespace no healthy watcher covers: its key reconciled with
    cause "sweep" (drift recorded; repaired where its tier says so). What was found."""
    key = namespace_key(namespace.cluster.name, namespace.name)
    return run([key], cause=Cause("sweep"), worker=worker)[key].findings


def active_namespaces() -> QuerySet[Namespace]:
    return Namespace.objects.filter(state=NamespaceState.ACTIVE).select_related(
        "tenant", "tier", "tier_revision", "cluster", "project"
    )


def schedule_grant_ends(request_ids: list[int]) -> None:
    """The access grants these requests (just Ready) gave: each one's key queued for the
    moment it ends, so the queue knows the deadline (the watcher knows it too)."""
    now = timezone.now()
    for grant in AccessGrant.objects.filter(request_id__in=request_ids).select_related(
        "namespace__cluster"
    ):
        if grant.expires_at is None:
            continue
        enqueue(
            [grant_key(grant.namespace.cluster.name, grant.pk)],
            cause=Cause("grant", grant.pk, detail="ends"),
            delay=max(0.0, (grant.expires_at - now).total_seconds()),
        )
