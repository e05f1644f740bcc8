"""The keyed work queue, on the database Berth already has: one row per key (a key queued
twice is reconciled once, its causes kept together), claimed by one worker at a time
(`FOR UPDATE SKIP LOCKED` where the database has it), requeued with backoff when its
reconcile waits. Celery only carries "look at the queue" (provisioning.tasks)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from provisioning.models import QueuedKey
from provisioning.reconcile.keys import Key

# At most this many causes kept per key (the oldest go first): a flapping object must not
# grow a row without end.
MAX_CAUSES = 20


@dataclass(frozen=True)
class Cause:
    """Why a key is reconciled, as its audit events name it."""

    kind: str  # request | campaign | rollback | drift | sweep | repair | token
    id: int | None = None
    actor: str = ""
    detail: str = ""

    def __str__(self) -> str:
        said = f"{self.kind} {self.id}" if self.id is not None else self.kind
        if self.actor:
            said += f" by {self.actor}"
        return f"{said} ({self.detail})" if self.detail else said

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "actor": self.actor, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cause:
        return cls(data["kind"], data.get("id"), data.get("actor", ""), data.get("detail", ""))


@dataclass(frozen=True)
class Claim:
    key: Key
    generation: int
    causes: tuple[Cause, ...]
    attempts: int


def _merged(causes: list[dict[str, Any]], cause: Cause) -> list[dict[str, Any]]:
    entry = cause.as_dict()
    kept = [each for each in causes if each != entry]
    return [*kept, entry][-MAX_CAUSES:]


def add(keys: Iterable[Key], *, cause: Cause, delay: float = 0.0) -> list[Key]:
    """Queue the keys (those queued already: this cause joins theirs, and the earliest
    time wins), in a few statements however many. Returns them; the task
    `provisioning.reconcile_keys` drains the queue."""
    return [claimed.key for claimed in _queue(keys, cause=cause, delay=delay, worker="")[0]]


def _free(now: datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def claim(keys: Iterable[Key], *, worker: str, cause: Cause) -> tuple[list[Claim], list[Key]]:
    """Queue these keys with `cause` and claim them for `worker` now, whatever their time:
    those it got, and those another worker holds (they stay queued with this cause)."""
    return _queue(keys, cause=cause, delay=0.0, worker=worker)


def _queue(
    keys: Iterable[Key], *, cause: Cause, delay: float, worker: str
) -> tuple[list[Claim], list[Key]]:
    by_name = {str(key): key for key in keys}
    if not by_name:
        return [], []
    now = timezone.now()
    at = now + timedelta(seconds=delay)
    QueuedKey.objects.bulk_create(
        [QueuedKey(key=name, causes=[], queued_at=now, not_before=at) for name in by_name],
        ignore_conflicts=True,
    )
    got, held = [], []
    with transaction.atomic():
        rows = list(QueuedKey.objects.select_for_update().filter(key__in=list(by_name)))
        for row in rows:
            row.causes = _merged(row.causes, cause)
            row.not_before = min(row.not_before, at)
            row.generation += 1
            free = row.claimed_until is None or row.claimed_until < now or row.claimed_by == worker
            if worker and free:
                row.claimed_by = worker
                row.claimed_until = now + timedelta(seconds=settings.PROVISIONING_LEASE_SECONDS)
                got.append(_claim_of(row))
            elif worker:
                held.append(by_name[row.key])
            else:
                got.append(_claim_of(row))
        QueuedKey.objects.bulk_update(
            rows, ["causes", "not_before", "generation", "claimed_by", "claimed_until"]
        )
    return got, held


def _claim_of(row: QueuedKey) -> Claim:
    return Claim(
        key=Key.parse(row.key),
        generation=row.generation,
        causes=tuple(Cause.from_dict(each) for each in row.causes),
        attempts=row.attempts,
    )


def claim_due(*, worker: str, limit: int) -> list[Claim]:
    """Up to `limit` keys whose time has come that no worker holds, oldest first."""
    now = timezone.now()
    with transaction.atomic():
        due = list(
            QueuedKey.objects.select_for_update(skip_locked=True)
            .filter(_free(now), not_before__lte=now)
            .order_by("not_before", "id")
            .values_list("pk", flat=True)[:limit]
        )
    return _claim_row(Q(pk__in=due), worker=worker) if due else []


def _claim_row(which: Q, *, worker: str) -> list[Claim]:
    now = timezone.now()
    until = now + timedelta(seconds=settings.PROVISIONING_LEASE_SECONDS)
    with transaction.atomic():
        rows = list(
            QueuedKey.objects.select_for_update(skip_locked=True).filter(
                which, _free(now) | Q(claimed_by=worker)
            )
        )
        QueuedKey.objects.filter(pk__in=[row.pk for row in rows]).update(
            claimed_by=worker, claimed_until=until
        )
    return [_claim_of(row) for row in rows]


def done(claims: Claim | list[Claim], *, worker: str) -> None:
    """Reconciled: the rows go, but for keys queued again meanwhile (those stay, free, with
    only the causes that came since)."""
    claims = [claims] if isinstance(claims, Claim) else claims
    if not claims:
        return
    settled = Q()
    for each in claims:
        settled |= Q(key=str(each.key), generation=each.generation)
    QueuedKey.objects.filter(settled, claimed_by=worker).delete()
    names = {str(each.key): each for each in claims}
    with transaction.atomic():
        again = list(
            QueuedKey.objects.select_for_update().filter(key__in=list(names), claimed_by=worker)
        )
        for row in again:
            handled = [cause.as_dict() for cause in names[row.key].causes]
            row.causes = [each for each in row.causes if each not in handled] or row.causes
            row.claimed_by, row.claimed_until, row.attempts = "", None, 0
            row.not_before = timezone.now()
        if again:
            QueuedKey.objects.bulk_update(
                again, ["causes", "claimed_by", "claimed_until", "attempts", "not_before"]
            )


def backoff(attempts: int) -> float:
    """Seconds before the next try: doubling from BERTH_RECONCILE_RETRY_SECONDS up to
    BERTH_RECONCILE_RETRY_MAX_SECONDS, with a tenth of jitter so keys spread out."""
    base = settings.BERTH_RECONCILE_RETRY_SECONDS * (2 ** min(attempts, 16))
    seconds = min(base, settings.BERTH_RECONCILE_RETRY_MAX_SECONDS)
    return seconds * (1 + random.uniform(0, 0.1))  # noqa: S311 - spreading, not secrecy


def retry(claim_: Claim, *, worker: str, at: datetime | None, error: str) -> datetime:
    """Not done: free again at `at` (or after its backoff), the error kept."""
    when = at or timezone.now() + timedelta(seconds=backoff(claim_.attempts))
    QueuedKey.objects.filter(key=str(claim_.key), claimed_by=worker).update(
        claimed_by="",
        claimed_until=None,
        not_before=when,
        attempts=F("attempts") + 1,
        last_error=error[:2000],
    )
    return when


def held_keys(keys: Iterable[Key]) -> set[Key]:
    """Those of `keys` a worker is reconciling now."""
    names = {str(key): key for key in keys}
    return {
        names[name]
        for name in QueuedKey.objects.filter(
            key__in=list(names), claimed_until__gt=timezone.now()
        ).values_list("key", flat=True)
    }


def renew_holds(keys: Iterable[Key], *, worker: str) -> None:
    """A long run keeps the keys it holds as it keeps its requests' leases."""
    until = timezone.now() + timedelta(seconds=settings.PROVISIONING_LEASE_SECONDS)
    QueuedKey.objects.filter(key__in=[str(key) for key in keys], claimed_by=worker).update(
        claimed_until=until
    )


@contextmanager
def holding(keys: Iterable[Key], *, worker: str, cause: Cause) -> Iterator[set[Key]]:
    """Hold the keys while a request's run changes them (the watcher defers what it sees
    of them meanwhile, and no other worker reconciles them); yields those another worker
    holds. Four statements however many keys: a run pays for it once per batch."""
    names = {str(key): key for key in keys}
    now = timezone.now()
    until = now + timedelta(seconds=settings.PROVISIONING_LEASE_SECONDS)
    QueuedKey.objects.bulk_create(
        [QueuedKey(key=name, causes=[], queued_at=now, not_before=now) for name in names],
        ignore_conflicts=True,
    )
    mine = QueuedKey.objects.filter(key__in=list(names))
    got = mine.filter(_free(now) | Q(claimed_by=worker)).update(
        claimed_by=worker, claimed_until=until
    )
    held = set()
    if got < len(names):
        held = {
            names[name] for name in mine.exclude(claimed_by=worker).values_list("key", flat=True)
        }
    try:
        yield held
    finally:
        # Made for this hold alone: gone. Queued by someone meanwhile (a drift seen, a
        # campaign's wave): free again, for the queue to reconcile after this run.
        mine.filter(claimed_by=worker, generation=0).delete()
        mine.filter(claimed_by=worker).update(claimed_by="", claimed_until=None, not_before=now)
