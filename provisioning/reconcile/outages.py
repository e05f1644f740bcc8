"""A cluster or a repository that does not answer: the request waits and is tried again by
itself, resuming where it stopped; past the deadline it fails (or, not started, goes back to
approval) with the reason."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from provisioning.records import leases, run_steps
from tenants import services
from tenants.conditions import Outcome, Reason, failed, returned
from tenants.models import Request, Run

logger = logging.getLogger(__name__)


def outage_delay(waited: timedelta) -> timedelta:
    """Half the time waited so far, within the configured bounds: tries thin out as an
    outage lasts, and the first comes soon."""
    seconds = max(settings.BERTH_OUTAGE_RETRY_SECONDS, waited.total_seconds() / 2)
    return timedelta(seconds=min(seconds, settings.BERTH_OUTAGE_RETRY_MAX_SECONDS))


def wait_for_outage(
    *, tenancy_request: Request, run: Run | None, reason: str, waiting_for: Reason
) -> Outcome:
    """The cluster or the repository did not answer after the client's own retries: the
    request waits and is tried again by itself (the sweep, or the worker's delayed task),
    resuming where it stopped; past the deadline it fails with the reason."""
    now = timezone.now()
    since = tenancy_request.waiting_since or now
    deadline = timedelta(seconds=settings.BERTH_OUTAGE_DEADLINE_SECONDS)
    if now - since >= deadline:
        message = (
            f"{reason}; gave up after waiting since {since:%Y-%m-%d %H:%M} UTC "
            f"({deadline.total_seconds() / 60:.0f} minutes). Retry when it is back."
        )
        logger.warning("request %s failed: %s", tenancy_request.pk, message)
        if run is not None:
            stopped = next(
                (i for i, step in enumerate(run.steps) if step["outcome"] == "pending"), None
            )
            if stopped is not None:
                run_steps.record_step(
                    run=run, index=stopped, outcome="failed", attempts=0, message=reason
                )
                message = f"{run.steps[stopped]['object']}: {message}"
            services.mark_failed(run=run, error=message)
            return failed(Reason.GAVE_UP, message)
        leases.stop_waiting(request_id=tenancy_request.pk)
        services.return_to_approval(request_id=tenancy_request.pk, reason=message)
        return returned(Reason.GAVE_UP, f"returned to approval: {message}")
    next_try = now + outage_delay(now - since)
    outcome = leases.wait(
        request_id=tenancy_request.pk,
        since=since,
        until=next_try,
        reason=reason,
        waiting_for=waiting_for,
    )
    logger.warning(
        "request %s waits until %s: %s",
        tenancy_request.pk,
        next_try.isoformat(timespec="seconds"),
        reason,
    )
    return outcome
