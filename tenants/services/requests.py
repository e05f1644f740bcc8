"""Asking and deciding: submit a request (validated, within budget, as the approval policy
says), approve it bound to a plan digest, reject, cancel, retry, comment.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db import transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from tenants import audit, budget, engine, kinds, policy, selectors
from tenants.choices import (
    ApproverRole,
    Decision,
    EnvironmentState,
    PolicyOutcome,
    RequestKind,
    RequestState,
)
from tenants.errors import DomainError, IllegalTransition, NotAllowed
from tenants.kinds import kind_for, validate_payload
from tenants.models import Approval, Comment, EphemeralEnvironment, Request, Run, Tenant, User
from tenants.services.claims import claim_names, release_claims
from tenants.services.lifecycle import (
    TRANSITIONS,
    transition,
    transition_many,
    transition_opening_run,
)
from tenants.signals import request_state_changed


def submit_request(
    *,
    tenant: Tenant,
    kind: RequestKind | str,
    payload: dict[str, Any],
    requester: User,
    source_ip: str | None = None,
) -> Request:
    """Validate, check the budget, ask the approval policy, and record the request.

    Raises rest_framework's ValidationError (by field) for bad input or an exhausted
    budget, NotAllowed for someone outside the tenant or a rule that denies. Nothing is
    saved in either case. A rule that auto-approves approves in the same transaction.
    """
    if not selectors.may_request(requester, tenant):
        raise NotAllowed(f"You are not a member of {tenant.slug}; ask one of its owners.")
    if tenant.retired_at is not None:
        raise ValidationError(
            {
                "tenant": [
                    f"{tenant.slug} was retired on {tenant.retired_at:%Y-%m-%d}: it takes no "
                    "request."
                ]
            }
        )
    if kind in kinds.KINDS and kind_for(kind).asked_elsewhere:
        raise ValidationError({"kind": [kind_for(kind).asked_elsewhere]})
    refuse_unwritable_repository(tenant=tenant, kind=kind)
    cleaned = validate_payload(kind=kind, tenant=tenant, payload=payload)
    with transaction.atomic():
        # One admission at a time per tenant: the budget check below must see every claim.
        Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
        refuse_duplicate(tenant=tenant, kind=kind, cleaned=cleaned)
        budget.check_fits(
            tenant=tenant, wanted=kind_for(kind).demand(tenant=tenant, payload=cleaned)
        )
        attributes = policy.attributes_for(
            tenant=tenant, kind=kind, payload=cleaned, requester=requester
        )
        decision = policy.decide(attributes)
        if decision.outcome == PolicyOutcome.DENY:
            denied = decision
        else:
            denied = None
            tenancy_request = admit(
                tenant=tenant,
                kind=kind,
                cleaned=cleaned,
                requester=requester,
                decision=decision,
                source_ip=source_ip,
                attributes=attributes,
            )
    if denied is not None:
        # Recorded after the admission transaction ends, which saved nothing.
        audit.record(
            actor=requester,
            action="request.denied",
            obj=tenant,
            tenant_id=tenant.pk,
            source_ip=source_ip,
            after={"kind": kind, "payload": cleaned, "rule": denied.rule, "attributes": attributes},
        )
        raise NotAllowed(denied.message or f"Denied by the approval rule {denied.rule}.")
    return tenancy_request


def refuse_duplicate(*, tenant: Tenant, kind: str, cleaned: dict[str, Any]) -> None:
    """Under the tenant's lock, so two at once cannot both pass."""
    keys = kind_for(kind).deduplicated_by
    if not keys:
        return
    same = {f"payload__{key}": cleaned[key] for key in keys}
    first = (
        Request.objects.filter(
            tenant=tenant, kind=kind, state__in=budget.PENDING_REQUEST_STATES, **same
        )
        .order_by("pk")
        .first()
    )
    if first is not None:
        then = (
            "cancel it first"
            if first.state == RequestState.SUBMITTED
            else "a platform admin may retry it"
            if first.state == RequestState.FAILED
            else "it is under way"
        )
        raise ValidationError(
            {
                keys[0]: [
                    f"This is already asked for in request #{first.pk} "
                    f"({first.get_state_display().lower()}): follow that one; {then}."
                ]
            }
        )


def refuse_unwritable_repository(*, tenant: Tenant, kind: str) -> None:
    """A tenant whose repository check failed (Berth cannot read or push to it) gets no new
    request: each would fail at its GitOps commit. Until the settings pass the check."""
    if (
        tenant.gitops_repo_url.strip()
        and tenant.repository_check_ok is False
        and kind not in kinds.kinds_where(decommissions=True)
    ):
        raise ValidationError(
            {
                "tenant": [
                    f"{tenant.slug}'s GitOps repository failed its check: "
                    f"{tenant.repository_check_message} A platform admin fixes the repository "
                    "settings; requests are taken again once the check passes."
                ]
            }
        )


def admit(
    *,
    tenant: Tenant,
    kind: str,
    cleaned: dict[str, Any],
    requester: User,
    decision: policy.PolicyDecision,
    source_ip: str | None,
    system: bool = False,
    attributes: dict[str, Any] | None = None,
) -> Request:
    """Record an admitted request; `system` when Berth itself asks (on expiry), on behalf
    of `requester`: the audit log then names no person as its actor. `attributes`: what
    the rules saw when they decided, kept for replaying other rules over it."""
    tenancy_request = Request.objects.create(
        tenant=tenant,
        kind=kind,
        payload=cleaned,
        requester=requester,
        policy_rule=decision.rule,
        approvals_required=decision.approvals_required,
        approver_role=decision.approver_role,
        policy_attributes=attributes,
        status_message=_awaiting(decision.approvals_required, decision.approver_role, 0),
    )
    claim_names(tenancy_request)
    audit.record(
        actor=None if system else requester,
        action="request.submit",
        obj=tenancy_request,
        tenant_id=tenant.pk,
        after={
            "state": tenancy_request.state,
            "kind": kind,
            "payload": cleaned,
            "rule": decision.rule,
        },
        source_ip=source_ip,
    )
    request_id = tenancy_request.pk
    transaction.on_commit(
        lambda: request_state_changed.send(
            sender=Request, request_ids=[request_id], action="submit", state=RequestState.SUBMITTED
        )
    )
    if decision.outcome == PolicyOutcome.AUTO_APPROVE:
        Approval.objects.create(
            request=tenancy_request,
            approver=None,
            decision=Decision.APPROVE,
            reason=f"Rule {decision.rule} approves automatically.",
            plan_digest=policy_digest(tenancy_request),
        )
        tenancy_request = transition(
            request_id=request_id,
            action="approve",
            actor=None,
            message=f"Approved automatically by rule {decision.rule}.",
        )
    return tenancy_request


def policy_digest(tenancy_request: Request) -> str:
    """What a rule approving on its own is bound to: the plan as it renders now (no
    repository read on the way in; the run compares the plan it renders with this one and
    sends a request whose plan moved back to approval, as it does for a person's)."""
    try:
        return engine.approval_digest(engine.plan(tenancy_request).digest, None)
    except engine.PlanUnavailable:
        return ""  # the run fails it, saying what is gone


def _awaiting(required: int, role: str, have: int) -> str:
    who = ApproverRole(role).label.lower()
    return f"Awaiting approval: {have} of {required} from a {who}."


def _refuse_decision(
    *, tenancy_request: Request, user: User, action: str, source_ip: str | None
) -> None:
    reason = selectors.why_cannot_decide(user, tenancy_request)
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
    """Record an approval bound to the digest of the plan the approver saw; once the
    policy's number of approvals for that plan is reached, the request is approved."""
    tenancy_request = Request.objects.select_related("tenant").get(pk=request_id)
    _refuse_decision(
        tenancy_request=tenancy_request, user=approver, action="approve", source_ip=source_ip
    )
    with transaction.atomic():
        return _record_approvals(
            digests={request_id: plan_digest}, approver=approver, reason=reason, source_ip=source_ip
        )[0]


# More at once is a review nobody did: the queue shows at most this many per page anyway.
APPROVE_TOGETHER_MAX = 50


def approve_together(
    *,
    decisions: list[tuple[int, str]],
    approver: User,
    reason: str = "",
    source_ip: str | None = None,
) -> list[Request]:
    """Approve several requests at once, each bound to the plan digest the approver saw:
    all of them or, if any cannot be approved, none. They must share one policy outcome
    (the same rule, number of approvals and approver role), so one look covers them all."""
    if not decisions:
        raise DomainError("Select the requests to approve.")
    if len(decisions) > APPROVE_TOGETHER_MAX:
        raise DomainError(f"Approve at most {APPROVE_TOGETHER_MAX} requests at once.")
    wanted = dict(decisions)
    found = {r.pk: r for r in Request.objects.select_related("tenant").filter(pk__in=wanted)}
    for request_id in wanted:
        if request_id not in found:
            raise DomainError(f"Request #{request_id} does not exist.")
    for tenancy_request in found.values():
        _refuse_decision(
            tenancy_request=tenancy_request, user=approver, action="approve", source_ip=source_ip
        )
    outcomes = {(r.policy_rule, r.approvals_required, r.approver_role): r for r in found.values()}
    if len(outcomes) > 1:
        described = "; ".join(
            f"#{r.pk}: rule {rule or '—'}, {needed} approval{'s' if needed != 1 else ''} "
            f"from a {r.get_approver_role_display().lower()}"
            for (rule, needed, _), r in sorted(outcomes.items(), key=lambda o: o[1].pk)
        )
        raise DomainError(
            "Only requests with the same policy outcome are approved together, "
            f"and these differ ({described}). Approve them separately."
        )
    with transaction.atomic():
        return _record_approvals(
            digests=wanted, approver=approver, reason=reason, source_ip=source_ip
        )


def _record_approvals(
    *, digests: dict[int, str], approver: User, reason: str, source_ip: str | None
) -> list[Request]:
    """Inside a transaction: each request's approval by `approver`, bound to its digest;
    those that reach their policy's number of approvals move to approved, together. In
    request order; raises (saving nothing) when one may not be approved."""
    ids = sorted(digests)
    locked = {
        r.pk: r for r in Request.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    }
    for request_id in ids:
        if locked[request_id].state not in TRANSITIONS["approve"].sources:
            raise IllegalTransition(
                request_id=request_id,
                state_label=locked[request_id].get_state_display(),
                action="approved",
            )
    mine = set(
        Approval.objects.filter(
            request_id__in=ids, approver=approver, decision=Decision.APPROVE
        ).values_list("request_id", "plan_digest")
    )
    if any((request_id, digests[request_id]) in mine for request_id in ids):
        raise DomainError("You have already approved this plan.")
    Approval.objects.bulk_create(
        [
            Approval(
                request=locked[request_id],
                approver=approver,
                decision=Decision.APPROVE,
                reason=reason,
                plan_digest=digests[request_id],
            )
            for request_id in ids
        ]
    )
    have = Counter(
        Approval.objects.filter(request_id__in=ids, decision=Decision.APPROVE).values_list(
            "request_id", "plan_digest"
        )
    )
    short = [
        locked[request_id]
        for request_id in ids
        if have[(request_id, digests[request_id])] < locked[request_id].approvals_required
    ]
    for tenancy_request in short:
        tenancy_request.status_message = _awaiting(
            tenancy_request.approvals_required,
            tenancy_request.approver_role,
            have[(tenancy_request.pk, digests[tenancy_request.pk])],
        )
        tenancy_request.updated_at = timezone.now()
    Request.objects.bulk_update(short, ["status_message", "updated_at"])
    audit.record_all(
        [
            audit.event(
                actor=approver,
                action="request.approval_recorded",
                obj=tenancy_request,
                tenant_id=tenancy_request.tenant_id,
                source_ip=source_ip,
                after={
                    "approvals": have[(tenancy_request.pk, digests[tenancy_request.pk])],
                    "required": tenancy_request.approvals_required,
                    "plan_digest": digests[tenancy_request.pk],
                },
            )
            for tenancy_request in short
        ]
    )
    reached = [request_id for request_id in ids if locked[request_id] not in short]
    approved = (
        {
            r.pk: r
            for r in transition_many(
                request_ids=reached,
                action="approve",
                actor=approver,
                message=reason,
                source_ip=source_ip,
                side_effect=lambda moved: {r.pk: {"plan_digest": digests[r.pk]} for r in moved},
            )
        }
        if reached
        else {}
    )
    return [approved.get(request_id) or locked[request_id] for request_id in ids]


def reject_request(
    *, request_id: int, approver: User, reason: str, source_ip: str | None = None
) -> Request:
    if not reason.strip():
        raise DomainError("A rejection needs a reason the requester can act on.")
    tenancy_request = Request.objects.select_related("tenant").get(pk=request_id)
    _refuse_decision(
        tenancy_request=tenancy_request, user=approver, action="reject", source_ip=source_ip
    )

    def record_rejection(locked: Request) -> dict[str, Any]:
        Approval.objects.create(
            request=locked, approver=approver, decision=Decision.REJECT, reason=reason
        )
        return release_claims(locked)

    return transition(
        request_id=request_id,
        action="reject",
        actor=approver,
        message=reason,
        source_ip=source_ip,
        side_effect=record_rejection,
    )


def cancel_request(*, request_id: int, actor: User, source_ip: str | None = None) -> Request:
    tenancy_request = Request.objects.get(pk=request_id)
    if tenancy_request.requester_id != actor.pk and not selectors.is_platform_admin(actor):
        raise NotAllowed("Only the requester or a platform admin may cancel a request.")
    return transition(
        side_effect=release_claims,
        request_id=request_id,
        action="cancel",
        actor=actor,
        message=f"Cancelled by {actor.username}.",
        source_ip=source_ip,
    )


def retry_request(
    *, request_id: int, actor: User, plan_digest: str, source_ip: str | None = None
) -> Run:
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may retry a failed request.")
    if EphemeralEnvironment.objects.filter(
        request_id=request_id, state__in=(EnvironmentState.ENDING, EnvironmentState.ENDED)
    ).exists():
        raise DomainError("Its ephemeral environment has ended since: there is nothing to retry.")
    return transition_opening_run(
        request_id=request_id,
        action="retry",
        plan_digest=plan_digest,
        actor=actor,
        source_ip=source_ip,
    )


def add_comment(
    *, request_id: int, author: User, body: str, source_ip: str | None = None
) -> Comment:
    tenancy_request = Request.objects.get(pk=request_id)
    if not body.strip():
        raise DomainError("A comment needs some text.")
    with transaction.atomic():
        comment = Comment.objects.create(request=tenancy_request, author=author, body=body)
        audit.record(
            actor=author,
            action="request.comment",
            obj=tenancy_request,
            tenant_id=tenancy_request.tenant_id,
            after={"comment": comment.pk},
            source_ip=source_ip,
        )
    return comment
