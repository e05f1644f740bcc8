"""Who works on a request, and when: a worker's lease on it (and on the requests it
provisions with), or a wait (out of an outage, or for a cluster's guardrails) during which no
worker takes it and after which the sweep hands it out again."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Case, Q, When
from django.utils import timezone

from tenants.choices import (
    RequestState,
)
from tenants.conditions import Outcome, Reason, conditions_for, waiting
from tenants.models import (
    Cluster,
    Request,
)


def acquire_lease(*, request_id: int, owner: str, seconds: float) -> bool:
    """Take the request's lease if it is free or expired; True when this worker holds it."""
    now = timezone.now()
    taken = (
        Request.objects.filter(pk=request_id)
        .filter(
            Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(lease_owner=owner)
        )
        .update(lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds))
    )
    return taken == 1


def claim_companions(
    *,
    leader_id: int,
    owner: str,
    seconds: float,
    kinds: tuple[str, ...],
    cluster: str,
    limit: int,
    first: tuple[int, ...] = (),
) -> list[int]:
    """Lease, for `owner`, up to `limit` other approved requests of these kinds on this
    cluster that no worker holds, those in `first` first, then the oldest: they are
    provisioned with the leader. Returns their ids."""
    if limit <= 0:
        return []
    now = timezone.now()
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    candidates = (
        Request.objects.filter(
            free, state=RequestState.APPROVED, kind__in=kinds, payload__cluster=cluster
        )
        .exclude(pk=leader_id)
        .order_by(Case(When(pk__in=first, then=0), default=1), "pk")
        .values("pk")[:limit]
    )
    # The lease conditions again outside the subquery: two workers picking the same rows,
    # the second one's UPDATE re-reads them after the first commits and leaves them.
    taken = Request.objects.filter(free, pk__in=candidates, state=RequestState.APPROVED).update(
        lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds)
    )
    if not taken:
        return []
    return list(
        Request.objects.filter(lease_owner=owner, state=RequestState.APPROVED)
        .exclude(pk=leader_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def renew_leases(*, request_ids: list[int], owner: str, seconds: float) -> None:
    Request.objects.filter(pk__in=request_ids, lease_owner=owner).update(
        lease_expires_at=timezone.now() + timedelta(seconds=seconds)
    )


def release_leases(*, request_ids: list[int], owner: str) -> None:
    Request.objects.filter(pk__in=request_ids, lease_owner=owner).update(
        lease_owner="", lease_expires_at=None
    )


def guardrails_installed(*, cluster_id: int, digest: str) -> None:
    """The cluster holds the guardrails of this digest since now; requests waiting for
    them go on (the sweep hands them out)."""
    Cluster.objects.filter(pk=cluster_id).update(
        guardrails_digest=digest, guardrails_installed_at=timezone.now()
    )
    Request.objects.filter(waiting_for=Reason.GUARDRAILS).update(
        next_try_at=None, lease_expires_at=None
    )


def wait(
    *, request_id: int, since: datetime, until: datetime, reason: str, waiting_for: Reason
) -> Outcome:
    """Park the request until `until`: its lease runs until then with no owner, so no
    worker takes it before, and the sweep hands it out after. Its conditions say why."""
    outcome = waiting(waiting_for, reason, until)
    Request.objects.filter(pk=request_id).update(
        waiting_since=since,
        next_try_at=until,
        wait_reason=reason[:500],
        waiting_for=waiting_for,
        # What pages, the API and the CLI show as the request's status says why it waits.
        status_message=f"Waiting: {reason}",
        conditions=conditions_for(outcome),
        lease_owner="",
        lease_expires_at=until,
    )
    return outcome


def stop_waiting(*, request_id: int) -> None:
    Request.objects.filter(pk=request_id).update(
        waiting_since=None,
        next_try_at=None,
        wait_reason="",
        waiting_for="",
        lease_owner="",
        lease_expires_at=None,
    )
