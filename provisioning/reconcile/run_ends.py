"""How a request's run stops short of Ready, each as a typed outcome: it waits (for the
cluster's guardrails, for keys another worker holds, out of an outage), or it fails (its plan
cannot be rendered, is invalid, or was refused), saying why in its run and its status."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from provisioning.kube import KubeError
from provisioning.reconcile.batches import Item
from provisioning.reconcile.git_step import GitFailure
from provisioning.reconcile.keys import Key
from provisioning.reconcile.outages import wait_for_outage
from provisioning.records import leases, run_steps
from tenants import services
from tenants.choices import RequestState, RunState
from tenants.conditions import Outcome, Reason, failed, idle
from tenants.models import Cluster, Request, Run

logger = logging.getLogger(__name__)


def wait_for_guardrails(tenancy_request: Request, problem: str) -> Outcome:
    """The cluster's guardrails are missing, outdated or weakened: the request waits,
    saying so, as long as that lasts (no deadline: nothing is wrong with the request), and
    goes on once a platform admin installs them."""
    now = timezone.now()
    logger.warning("request %s waits: %s", tenancy_request.pk, problem)
    return leases.wait(
        request_id=tenancy_request.pk,
        since=tenancy_request.waiting_since or now,
        until=now + timedelta(seconds=settings.BERTH_GUARDRAILS_CHECK_SECONDS),
        reason=problem,
        waiting_for=Reason.GUARDRAILS,
    )


def unrenderable(tenancy_request: Request, error: Exception) -> Outcome:
    """What the request names cannot be read into a plan (a tier, a project or a namespace
    it names is gone): it fails saying so, and the others of its batch go on."""
    message = f"Its plan could not be rendered, nothing was applied: {error}"
    logger.warning("request %s: %s", tenancy_request.pk, message, exc_info=True)
    if tenancy_request.state == RequestState.APPROVED:
        run = services.start_provisioning(request_id=tenancy_request.pk, plan_digest="")
    else:
        run = tenancy_request.runs.filter(state=RunState.RUNNING).first()
    if run is None:
        return idle("no open run")
    services.mark_failed(run=run, error=message)
    return failed(Reason.UNRENDERABLE, message)


def wait_for_keys(item: Item, keys: list[Key]) -> Outcome:
    now = timezone.now()
    return leases.wait(
        request_id=item.pk,
        since=item.request.waiting_since or now,
        until=now + timedelta(seconds=settings.BERTH_RECONCILE_RETRY_SECONDS),
        reason=f"{', '.join(map(str, keys))} being changed by another worker",
        waiting_for=Reason.KEY_BUSY,
    )


def first_pending(run: Run) -> int:
    return next(i for i, step in enumerate(run.steps) if step["outcome"] == "pending")


def stopped(item: Item, stopped_at: int, error: KubeError, *, cluster: Cluster) -> Outcome:
    """An object of the item's plan was refused, or the cluster did not answer."""
    if error.transient:
        # The step stays pending: the next try starts there, past what this one applied.
        run_steps.write_steps(runs=[item.run])
        return wait_for_outage(
            tenancy_request=item.request,
            run=item.run,
            reason=f"{cluster.name}: {error.message}",
            waiting_for=Reason.CLUSTER_UNREACHABLE,
        )
    run_steps.note_step(
        run=item.run,
        index=stopped_at,
        outcome="failed",
        attempts=error.attempts,
        message=error.message,
    )
    message = f"{item.run.steps[stopped_at]['object']}: {error.message}"
    logger.warning("request %s failed: %s", item.pk, message)
    services.mark_failed(run=item.run, error=message)
    return failed(Reason.REFUSED, message)


def git_failed(*, tenancy_request: Request, run: Run, failure: GitFailure) -> Outcome:
    if failure.transient:
        return wait_for_outage(
            tenancy_request=tenancy_request,
            run=run,
            reason=f"repository unreachable: {failure.message}",
            waiting_for=Reason.REPOSITORY_UNREACHABLE,
        )
    services.mark_failed(run=run, error=failure.error)
    return failed(Reason.REFUSED, failure.error)


def refuse_invalid_plan(
    *, tenancy_request: Request, run: Run, problems: dict[str, list[str]]
) -> Outcome:
    """The plan failed validation: fail the request before the first API call or commit,
    each bad object's step saying what is wrong with it."""
    for index, step in enumerate(run.steps):
        if step["object"] in problems:
            message = "; ".join(problems[step["object"]])
            run_steps.record_step(
                run=run, index=index, outcome="failed", attempts=0, message=message
            )
    reasons = " | ".join(f"{key}: {'; '.join(found)}" for key, found in problems.items())
    message = f"The plan failed validation, nothing was applied: {reasons}"
    logger.warning("request %s refused before any API call: %s", tenancy_request.pk, reasons)
    services.mark_failed(run=run, error=message)
    return failed(Reason.INVALID, message)
