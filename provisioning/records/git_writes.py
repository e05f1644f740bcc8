"""GitOps writes waiting for their repository's writer (reconcile.commits): queued per request,
taken by whichever worker writes next, finished with the push that carried them."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from provisioning.models import GitWrite
from tenants.choices import (
    RequestState,
)
from tenants.models import (
    Request,
)


def queue_git_write(*, request_id: int, repository: str) -> GitWrite:
    """The request waits for the writer of `repository`; a row an earlier push already
    finished (the request's worker went away before taking it) is returned as it is."""
    row, created = GitWrite.objects.get_or_create(
        request_id=request_id, defaults={"repository": repository, "queued_at": timezone.now()}
    )
    if not created and not row.outcome:
        GitWrite.objects.filter(pk=row.pk).update(repository=repository)
    return row


def git_write_waiting(*, request_id: int) -> bool:
    return GitWrite.objects.filter(request_id=request_id, outcome="").exists()


def waiting_git_writes(
    *, repository: str, exclude: int, limit: int, since: datetime
) -> list[Request]:
    """Other requests of the repository waiting for its writer, oldest first: those still
    provisioning, queued since `since` (a row its worker abandoned long ago is not taken)."""
    return list(
        Request.objects.filter(
            pk__in=GitWrite.objects.filter(repository=repository, outcome="", queued_at__gte=since)
            .exclude(request_id=exclude)
            .values("request_id"),
            state=RequestState.PROVISIONING,
        )
        .select_related("tenant")
        .order_by("pk")[:limit]
    )


def finish_git_writes(*, outcomes: dict[int, tuple[str, str]]) -> None:
    """Requests a push carried: request id -> (outcome, message), in one statement."""
    rows = list(GitWrite.objects.filter(request_id__in=outcomes, outcome=""))
    for row in rows:
        row.outcome, row.message = outcomes[row.request_id]
    GitWrite.objects.bulk_update(rows, ["outcome", "message"])


def take_git_write(*, request_id: int) -> GitWrite | None:
    """The finished write of this request, removed from the queue; None if not finished."""
    row = GitWrite.objects.filter(request_id=request_id).exclude(outcome="").first()
    if row is not None:
        row.delete()
    return row


def drop_git_write(*, request_id: int) -> None:
    GitWrite.objects.filter(request_id=request_id).delete()
