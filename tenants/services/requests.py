"""Asking and deciding: submit a request (validated, within budget, as the approval policy
says), approve it bound to a plan digest, reject, cancel, retry, comment.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from tenants import audit, budget, kinds, policy, selectors
from tenants.choices import (
    Decision,
    PolicyOutcome,
    RequestKind,
    RequestState,
)
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.kinds import kind_for, validate_payload
from tenants.models import Approval, Comment, Request, Run, Tenant, User
from tenants.services.approvals import awaiting, refuse_decision
from tenants.services.claims import claim_names, release_claims
from tenants.services.grants import record_grant
from tenants.services.lifecycle import (
    transition,
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
    own_entry: bool = False,
) -> Request:
    """Validate, check the budget, ask the approval policy, and record the request.

    Raises InvalidInput (by field) for bad input or an exhausted
    budget, NotAllowed for someone outside the tenant or a rule that denies. Nothing is
    saved in either case. A rule that auto-approves approves in the same transaction.
    `own_entry`: asked through the kind's own service (a kind asked elsewhere, such as
    access, refuses the request form and the requests API).
    """
    outsiders = kind in kinds.KINDS and kind_for(kind).open_to_outsiders
    if not (outsiders or selectors.may_request(requester, tenant)):
        raise NotAllowed(f"You are not a member of {tenant.slug}; ask one of its owners.")
    if tenant.retired_at is not None:
        raise InvalidInput.of(
            {
                "tenant": [
                    f"{tenant.slug} was retired on {tenant.retired_at:%Y-%m-%d}: it takes no "
                    "request."
                ]
            }
        )
    if kind in kinds.KINDS and kind_for(kind).asked_elsewhere and not own_entry:
        raise InvalidInput.of({"kind": [kind_for(kind).asked_elsewhere]})
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
        raise InvalidInput.of(
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
        and kind not in kinds.kinds_where(grants_access=True)  # writes no file
    ):
        raise InvalidInput.of(
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
        status_message=" ".join(
            filter(
                None,
                [awaiting(decision.approvals_required, decision.approver_role, 0), decision.failed],
            )
        ),
    )
    claim_names(tenancy_request)
    if kind_for(kind).grants_access:
        record_grant(tenancy_request)
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
            **({"rule_failed": decision.failed} if decision.failed else {}),
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
            plan_digest=selectors.policy_digest(tenancy_request),
        )
        tenancy_request = transition(
            request_id=request_id,
            action="approve",
            actor=None,
            message=f"Approved automatically by rule {decision.rule}.",
        )
    return tenancy_request


def reject_request(
    *, request_id: int, approver: User, reason: str, source_ip: str | None = None
) -> Request:
    if not reason.strip():
        raise DomainError("A rejection needs a reason the requester can act on.")
    tenancy_request = Request.objects.select_related("tenant").get(pk=request_id)
    refuse_decision(
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
    if not selectors.may_cancel(actor, tenancy_request):
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
    if selectors.environment_ended(Request.objects.get(pk=request_id)):
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
