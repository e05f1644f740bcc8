"""Writes of the tenancy domain. The only place a Request changes state.

Every transition runs in a transaction holding a row lock on the request, checks the
transition table, and writes an audit event; an illegal transition raises
`IllegalTransition` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit
from tenants.choices import Decision, RequestKind, RequestState, RunState
from tenants.errors import IllegalTransition, NotAllowed
from tenants.models import Approval, Request, Run, Tenant, User
from tenants.payloads import validate_payload
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


def _transition(
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
        tenancy_request.save(update_fields=["state", "status_message", "updated_at"])
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


def submit_request(
    *,
    tenant: Tenant,
    kind: RequestKind | str,
    payload: dict[str, Any],
    requester: User,
    source_ip: str | None = None,
) -> Request:
    """Validate the payload for its kind and record the request as awaiting approval."""
    cleaned = validate_payload(kind=kind, tenant=tenant, payload=payload)
    with transaction.atomic():
        tenancy_request = Request.objects.create(
            tenant=tenant, kind=kind, payload=cleaned, requester=requester
        )
        audit.record(
            actor=requester,
            action="request.submit",
            obj=tenancy_request,
            tenant_id=tenant.pk,
            after={"state": tenancy_request.state, "kind": kind, "payload": cleaned},
            source_ip=source_ip,
        )
    return tenancy_request


def _check_may_decide(
    *, tenancy_request: Request, user: User, action: str, source_ip: str | None
) -> None:
    reason = None
    if tenancy_request.requester_id == user.pk:
        reason = "Nobody may decide their own request."
    elif not (user.is_platform_admin or user.is_superuser):
        reason = "Only platform admins may decide requests."
    if reason:
        # Refusals are audited too: an attempt to decide without the right is worth knowing.
        audit.record(
            actor=user,
            action=f"request.{action}.refused",
            obj=tenancy_request,
            tenant_id=tenancy_request.tenant_id,
            after={"reason": reason},
            source_ip=source_ip,
        )
        raise NotAllowed(reason)


def approve_request(
    *,
    request_id: int,
    approver: User,
    plan_digest: str,
    reason: str = "",
    source_ip: str | None = None,
) -> Request:
    """Approve, binding the approval to the digest of the plan the approver saw."""
    tenancy_request = Request.objects.get(pk=request_id)
    _check_may_decide(
        tenancy_request=tenancy_request, user=approver, action="approve", source_ip=source_ip
    )

    def record_approval(locked: Request) -> dict[str, Any]:
        Approval.objects.create(
            request=locked,
            approver=approver,
            decision=Decision.APPROVE,
            reason=reason,
            plan_digest=plan_digest,
        )
        return {"plan_digest": plan_digest}

    return _transition(
        request_id=request_id,
        action="approve",
        actor=approver,
        message=reason,
        source_ip=source_ip,
        side_effect=record_approval,
    )


def reject_request(
    *, request_id: int, approver: User, reason: str, source_ip: str | None = None
) -> Request:
    if not reason.strip():
        raise NotAllowed("A rejection needs a reason the requester can act on.")
    tenancy_request = Request.objects.get(pk=request_id)
    _check_may_decide(
        tenancy_request=tenancy_request, user=approver, action="reject", source_ip=source_ip
    )

    def record_rejection(locked: Request) -> dict[str, Any]:
        Approval.objects.create(
            request=locked, approver=approver, decision=Decision.REJECT, reason=reason
        )
        return {}

    return _transition(
        request_id=request_id,
        action="reject",
        actor=approver,
        message=reason,
        source_ip=source_ip,
        side_effect=record_rejection,
    )


def cancel_request(*, request_id: int, actor: User, source_ip: str | None = None) -> Request:
    tenancy_request = Request.objects.get(pk=request_id)
    if tenancy_request.requester_id != actor.pk and not actor.is_platform_admin:
        raise NotAllowed("Only the requester or a platform admin may cancel a request.")
    return _transition(
        request_id=request_id,
        action="cancel",
        actor=actor,
        message=f"Cancelled by {actor.username}.",
        source_ip=source_ip,
    )


def start_provisioning(*, request_id: int, plan_digest: str) -> Run:
    """The worker takes an approved request: it moves to provisioning with a new Run."""
    runs: list[Run] = []

    def open_run(locked: Request) -> dict[str, Any]:
        runs.append(Run.objects.create(request=locked, plan_digest=plan_digest))
        return {"run": runs[0].pk}

    _transition(
        request_id=request_id, action="start_provisioning", actor=None, side_effect=open_run
    )
    return runs[0]


def _close_run(run: Run, *, state: str, error: str = "") -> None:
    run.state = state
    run.error = error
    run.finished_at = timezone.now()
    run.save(update_fields=["state", "error", "finished_at"])


def mark_ready(*, run: Run) -> Request:
    def close(locked: Request) -> dict[str, Any]:
        _close_run(run, state=RunState.SUCCEEDED)
        return {"run": run.pk}

    return _transition(
        request_id=run.request_id, action="mark_ready", actor=None, side_effect=close
    )


def mark_failed(*, run: Run, error: str) -> Request:
    def close(locked: Request) -> dict[str, Any]:
        _close_run(run, state=RunState.FAILED, error=error)
        return {"run": run.pk}

    return _transition(
        request_id=run.request_id,
        action="mark_failed",
        actor=None,
        message=error,
        side_effect=close,
    )


def retry_request(
    *, request_id: int, actor: User, plan_digest: str, source_ip: str | None = None
) -> Run:
    if not (actor.is_platform_admin or actor.is_superuser):
        raise NotAllowed("Only platform admins may retry a failed request.")
    runs: list[Run] = []

    def open_run(locked: Request) -> dict[str, Any]:
        runs.append(Run.objects.create(request=locked, plan_digest=plan_digest))
        return {"run": runs[0].pk}

    _transition(
        request_id=request_id,
        action="retry",
        actor=actor,
        source_ip=source_ip,
        side_effect=open_run,
    )
    return runs[0]


def start_decommission(
    *, request_id: int, actor: User | None, reason: str, source_ip: str | None = None
) -> Request:
    return _transition(
        request_id=request_id,
        action="start_decommission",
        actor=actor,
        message=reason,
        source_ip=source_ip,
    )


def return_to_approval(*, request_id: int, reason: str) -> Request:
    return _transition(
        request_id=request_id, action="return_to_approval", actor=None, message=reason
    )


def mark_decommissioned(*, request_id: int) -> Request:
    return _transition(request_id=request_id, action="mark_decommissioned", actor=None)
