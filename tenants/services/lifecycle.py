"""The request lifecycle (ARCHITECTURE.md): the one table every transition goes through.

Every transition runs in a transaction holding a row lock on the request, checks the
table, writes an audit event and, once committed, sends `request_state_changed`; an
illegal transition raises `IllegalTransition` and changes nothing. The engine reports a
run's progress through the transitions at the end of this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit, conditions
from tenants.bulk import update_each
from tenants.choices import RequestState, RunState
from tenants.errors import IllegalTransition
from tenants.kinds import kind_for
from tenants.models import Request, Run, User
from tenants.services.grants import record_granted, start_grants
from tenants.signals import request_state_changed

S = RequestState


@dataclass(frozen=True)
class Transition:
    sources: frozenset[str]
    target: str
    verb: str  # how the refusal message names the action


# The request lifecycle (ARCHITECTURE.md): the single table every transition goes through.
TRANSITIONS: dict[str, Transition] = {
    "approve": Transition(frozenset({S.SUBMITTED}), S.APPROVED, "approved"),
    # The plan changed between approval and provisioning: what was approved is not what
    # would be applied, so the request needs a new decision.
    "return_to_approval": Transition(frozenset({S.APPROVED}), S.SUBMITTED, "returned to approval"),
    "reject": Transition(frozenset({S.SUBMITTED}), S.REJECTED, "rejected"),
    "cancel": Transition(frozenset({S.SUBMITTED}), S.CANCELLED, "cancelled"),
    "start_provisioning": Transition(frozenset({S.APPROVED}), S.PROVISIONING, "provisioned"),
    "mark_ready": Transition(frozenset({S.PROVISIONING}), S.READY, "marked ready"),
    "mark_failed": Transition(frozenset({S.PROVISIONING}), S.FAILED, "marked failed"),
    "retry": Transition(frozenset({S.FAILED}), S.PROVISIONING, "retried"),
    "start_decommission": Transition(frozenset({S.READY}), S.DECOMMISSIONING, "decommissioned"),
    "mark_decommissioned": Transition(
        frozenset({S.DECOMMISSIONING}), S.DECOMMISSIONED, "marked decommissioned"
    ),
    # Merge-request mode (tenants.services.pull_requests): the run waits, open, for the
    # forge; merged, it goes on; closed unmerged, the request goes back to its requester.
    "await_merge": Transition(frozenset({S.PROVISIONING}), S.AWAITING_MERGE, "sent for review"),
    "resume_merged": Transition(
        frozenset({S.AWAITING_MERGE}), S.PROVISIONING, "resumed after its merge"
    ),
    "return_unmerged": Transition(frozenset({S.AWAITING_MERGE}), S.RETURNED, "returned"),
}


# The conditions a request is left with by each state it moves into (the worker's own
# waits write theirs, provisioning.records.leases.wait).
_OUTCOME_OF = {
    S.APPROVED: (conditions.Phase.PROGRESSING, conditions.Reason.NOTHING),
    S.PROVISIONING: (conditions.Phase.PROGRESSING, conditions.Reason.APPLYING),
    S.READY: (conditions.Phase.READY, conditions.Reason.RECONCILED),
    S.FAILED: (conditions.Phase.FAILED, conditions.Reason.REFUSED),
    S.AWAITING_MERGE: (conditions.Phase.WAITING, conditions.Reason.AWAITING_MERGE),
    S.RETURNED: (conditions.Phase.RETURNED, conditions.Reason.NOTHING),
    S.SUBMITTED: (conditions.Phase.RETURNED, conditions.Reason.MOVED),
    S.DECOMMISSIONING: (conditions.Phase.PROGRESSING, conditions.Reason.APPLYING),
    S.DECOMMISSIONED: (conditions.Phase.READY, conditions.Reason.RECONCILED),
}


def conditions_after(state: str, message: str) -> list[dict[str, Any]]:
    phase, reason = _OUTCOME_OF.get(state, (conditions.Phase.IDLE, conditions.Reason.NOTHING))
    return conditions.conditions_for(conditions.Outcome(phase, reason, message))


def transition(
    *,
    request_id: int,
    action: str,
    actor: User | None,
    message: str = "",
    source_ip: str | None = None,
    side_effect: Callable[[Request], dict[str, Any]] | None = None,
) -> Request:
    def each(locked: list[Request]) -> dict[int, dict[str, Any]]:
        return {locked[0].pk: side_effect(locked[0])} if side_effect else {}

    return transition_many(
        request_ids=[request_id],
        action=action,
        actor=actor,
        message=message,
        source_ip=source_ip,
        side_effect=each,
    )[0]


def transition_many(
    *,
    request_ids: Sequence[int],
    action: str,
    actor: User | None,
    message: str = "",
    source_ip: str | None = None,
    side_effect: Callable[[list[Request]], dict[int, dict[str, Any]]] | None = None,
) -> list[Request]:
    """The same transition for several requests in one transaction: all of them, or none
    when one may not move this way (IllegalTransition names it). Each still gets its own
    audit event; once committed, one `request_state_changed` names them all. `side_effect(locked)`
    runs inside the transaction; what it returns per request id joins that audit event."""
    rule = TRANSITIONS[action]
    with transaction.atomic():
        # Locked in id order, so two batches sharing a request cannot deadlock.
        locked = list(Request.objects.select_for_update().filter(pk__in=request_ids).order_by("pk"))
        if len(locked) != len(set(request_ids)):
            missing = sorted(set(request_ids) - {r.pk for r in locked})
            raise Request.DoesNotExist(f"Request #{missing[0]} does not exist.")
        for tenancy_request in locked:
            if tenancy_request.state not in rule.sources:
                raise IllegalTransition(
                    request_id=tenancy_request.pk,
                    state_label=tenancy_request.get_state_display(),
                    action=rule.verb,
                )
        before = {r.pk: {"state": r.state} for r in locked}
        # Whatever it waited for, it is not waiting in its new state.
        moved = {
            "state": rule.target,
            "status_message": message,
            "waiting_since": None,
            "next_try_at": None,
            "wait_reason": "",
            "waiting_for": "",
            "conditions": conditions_after(rule.target, message),
            "updated_at": timezone.now(),
        }
        Request.objects.filter(pk__in=[r.pk for r in locked]).update(**moved)
        for tenancy_request in locked:
            for field, value in moved.items():
                setattr(tenancy_request, field, value)
        extra = side_effect(locked) if side_effect is not None else {}
        if action == "approve":  # an access grant's time runs from its approval
            granting = [r.pk for r in locked if kind_for(r.kind).grants_access]
            for request_id, started in start_grants(granting).items():
                extra.setdefault(request_id, {}).update(started)
        events = []
        for tenancy_request in locked:
            after: dict[str, Any] = {"state": rule.target}
            if message:
                after["message"] = message
            after.update(extra.get(tenancy_request.pk, {}))
            events.append(
                audit.event(
                    actor=actor,
                    action=f"request.{action}",
                    obj=tenancy_request,
                    tenant_id=tenancy_request.tenant_id,
                    before=before[tenancy_request.pk],
                    after=after,
                    source_ip=source_ip,
                )
            )
        audit.record_all(events)
        moved_ids, state = [r.pk for r in locked], rule.target

        transaction.on_commit(
            lambda: request_state_changed.send(
                sender=Request, request_ids=moved_ids, action=action, state=state
            )
        )
    return locked


def transition_opening_run(
    *,
    request_id: int,
    action: str,
    plan_digest: str,
    actor: User | None = None,
    source_ip: str | None = None,
    steps: list[dict[str, Any]] | None = None,
) -> Run:
    """A transition into provisioning, with the Run that records this attempt: its steps
    laid out already when the worker opens it (a retry's are laid out by the worker)."""
    return transition_opening_runs(
        opening={request_id: (plan_digest, steps or [])},
        action=action,
        actor=actor,
        source_ip=source_ip,
    )[0]


def transition_opening_runs(
    *,
    opening: dict[int, tuple[str, list[dict[str, Any]]]],
    action: str,
    actor: User | None = None,
    source_ip: str | None = None,
) -> list[Run]:
    """Requests into provisioning together, each with the Run of this attempt; `opening`
    is request id -> (plan digest, steps laid out pending), in the order runs are
    returned."""
    opened: dict[int, Run] = {}

    def open_runs(locked: list[Request]) -> dict[int, dict[str, Any]]:
        runs = Run.objects.bulk_create(
            [
                Run(
                    request=r,
                    plan_digest=opening[r.pk][0],
                    steps=opening[r.pk][1],
                    attempts=1 if opening[r.pk][1] else 0,
                )
                for r in locked
            ]
        )
        opened.update((run.request_id, run) for run in runs)
        return {run.request_id: {"run": run.pk} for run in runs}

    transition_many(
        request_ids=list(opening),
        action=action,
        actor=actor,
        source_ip=source_ip,
        side_effect=open_runs,
    )
    return [opened[request_id] for request_id in opening]


def start_provisioning(
    *, request_id: int, plan_digest: str, steps: list[dict[str, Any]] | None = None
) -> Run:
    """The worker takes an approved request: it moves to provisioning with a new Run, its
    steps laid out pending."""
    return transition_opening_run(
        request_id=request_id, action="start_provisioning", plan_digest=plan_digest, steps=steps
    )


def start_provisioning_all(*, opening: dict[int, tuple[str, list[dict[str, Any]]]]) -> list[Run]:
    """`start_provisioning` for the approved requests a worker took together."""
    return transition_opening_runs(opening=opening, action="start_provisioning")


def _close_runs(runs: list[Run], *, state: str, error: str = "") -> None:
    """Each run finished: its state, its error, and the steps as it leaves them, in one
    statement."""
    now = timezone.now()
    for run in runs:
        run.state, run.error, run.finished_at = state, error, now
    update_each(
        Run,
        {
            run.pk: {"state": state, "error": error, "finished_at": now, "steps": run.steps}
            for run in runs
        },
    )


def mark_ready(*, run: Run) -> Request:
    return mark_all_ready(runs=[run])[0]


def mark_all_ready(*, runs: list[Run]) -> list[Request]:
    """Several runs succeeded: their requests are ready, their runs closed in the same
    transaction."""

    def close(locked: list[Request]) -> dict[int, dict[str, Any]]:
        _close_runs(runs, state=RunState.SUCCEEDED)
        record_granted([r for r in locked if kind_for(r.kind).grants_access])
        return {run.request_id: {"run": run.pk} for run in runs}

    return transition_many(
        request_ids=[run.request_id for run in runs],
        action="mark_ready",
        actor=None,
        side_effect=close,
    )


def mark_failed(*, run: Run, error: str) -> Request:
    def close(locked: Request) -> dict[str, Any]:
        _close_runs([run], state=RunState.FAILED, error=error)
        return {"run": run.pk}

    return transition(
        request_id=run.request_id,
        action="mark_failed",
        actor=None,
        message=error,
        side_effect=close,
    )


def start_decommission(
    *, request_id: int, actor: User | None, reason: str, source_ip: str | None = None
) -> Request:
    return transition(
        request_id=request_id,
        action="start_decommission",
        actor=actor,
        message=reason,
        source_ip=source_ip,
    )


def return_to_approval(*, request_id: int, reason: str) -> Request:
    return transition(
        request_id=request_id, action="return_to_approval", actor=None, message=reason
    )


def mark_decommissioned(*, request_id: int) -> Request:
    return transition(request_id=request_id, action="mark_decommissioned", actor=None)


def await_merge(*, request_id: int, message: str) -> Request:
    """Its pull request is open on the forge: the run waits, still open, for a merge."""
    return transition(request_id=request_id, action="await_merge", actor=None, message=message)


def resume_merged(*, request_id: int, message: str) -> Request:
    """Its pull request was merged: the run goes on where it waited."""
    return transition(request_id=request_id, action="resume_merged", actor=None, message=message)


def return_unmerged(
    *,
    request_id: int,
    reason: str,
    side_effect: Callable[[Request], dict[str, Any]] | None = None,
) -> Request:
    """Its pull request was closed without merging: the open run ends, failed with the
    forge's reason, and the request is back with its requester."""

    def close(locked: Request) -> dict[str, Any]:
        runs = list(Run.objects.filter(request_id=locked.pk, state=RunState.RUNNING))
        _close_runs(runs, state=RunState.FAILED, error=reason)
        extra = side_effect(locked) if side_effect is not None else {}
        return {"run": runs[0].pk, **extra} if runs else extra

    return transition(
        request_id=request_id,
        action="return_unmerged",
        actor=None,
        message=reason,
        side_effect=close,
    )
