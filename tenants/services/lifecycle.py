"""The request lifecycle (ARCHITECTURE.md): the one table every transition goes through.

Every transition runs in a transaction holding a row lock on the request, checks the
table, writes an audit event and, once committed, sends `request_state_changed`; an
illegal transition raises `IllegalTransition` and changes nothing. The engine reports a
run's progress through the transitions at the end of this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit
from tenants.choices import RequestState, RunState
from tenants.errors import IllegalTransition
from tenants.models import Request, Run, User
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
}


def transition(
    *,
    request_id: int,
    action: str,
    actor: User | None,
    message: str = "",
    source_ip: str | None = None,
    side_effect: Callable[[Request], dict[str, Any]] | None = None,
) -> Request:
    rule = TRANSITIONS[action]
    with transaction.atomic():
        tenancy_request = Request.objects.select_for_update().get(pk=request_id)
        if tenancy_request.state not in rule.sources:
            raise IllegalTransition(
                request_id=request_id,
                state_label=tenancy_request.get_state_display(),
                action=rule.verb,
            )
        before = {"state": tenancy_request.state}
        tenancy_request.state = rule.target
        tenancy_request.status_message = message
        # Whatever it waited for, it is not waiting in its new state.
        tenancy_request.waiting_since = tenancy_request.next_try_at = None
        tenancy_request.wait_reason = ""
        tenancy_request.save(update_fields=["state", "status_message", "waiting_since",
                                            "next_try_at", "wait_reason", "updated_at"])
        after: dict[str, Any] = {"state": tenancy_request.state}
        if message:
            after["message"] = message
        if side_effect is not None:
            after.update(side_effect(tenancy_request))
        audit.record(
            actor=actor,
            action=f"request.{action}",
            obj=tenancy_request,
            tenant_id=tenancy_request.tenant_id,
            before=before,
            after=after,
            source_ip=source_ip,
        )
        state = tenancy_request.state
        transaction.on_commit(
            lambda: request_state_changed.send(
                sender=Request, request_id=request_id, action=action, state=state
            )
        )
    return tenancy_request


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
    opened: list[Run] = []

    def open_run(locked: Request) -> dict[str, Any]:
        opened.append(Run.objects.create(request=locked, plan_digest=plan_digest,
                                         steps=steps or [], attempts=1 if steps else 0))
        return {"run": opened[0].pk}

    transition(
        request_id=request_id, action=action, actor=actor, source_ip=source_ip, side_effect=open_run
    )
    return opened[0]


def start_provisioning(*, request_id: int, plan_digest: str,
                       steps: list[dict[str, Any]] | None = None) -> Run:
    """The worker takes an approved request: it moves to provisioning with a new Run, its
    steps laid out pending."""
    return transition_opening_run(
        request_id=request_id, action="start_provisioning", plan_digest=plan_digest, steps=steps
    )


def _close_run(run: Run, *, state: str, error: str = "") -> None:
    run.state = state
    run.error = error
    run.finished_at = timezone.now()
    run.save(update_fields=["state", "error", "finished_at"])


def mark_ready(*, run: Run) -> Request:
    def close(locked: Request) -> dict[str, Any]:
        _close_run(run, state=RunState.SUCCEEDED)
        return {"run": run.pk}

    return transition(
        request_id=run.request_id, action="mark_ready", actor=None, side_effect=close
    )


def mark_failed(*, run: Run, error: str) -> Request:
    def close(locked: Request) -> dict[str, Any]:
        _close_run(run, state=RunState.FAILED, error=error)
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
