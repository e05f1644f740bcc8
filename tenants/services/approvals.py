"""Deciding for a request: approvals bound to the digest of the plan the approver saw, one
request at a time or several together from the queue.

The digest an approval carries must be the one approving binds to now
(tenants.selectors.review): a plan or GitOps change that moved since the approver read it
is refused with PlanMoved, and nothing is recorded.
"""

from __future__ import annotations

from collections import Counter

from django.db import transaction
from django.utils import timezone

from tenants import audit, provisioner, selectors
from tenants.choices import ApproverRole, Decision
from tenants.errors import DomainError, IllegalTransition, NotAllowed, PlanMoved
from tenants.models import Approval, Request, User
from tenants.selectors.requests import DECIDABLE_STATES
from tenants.services.lifecycle import TRANSITIONS, transition_many


def awaiting(required: int, role: str, have: int) -> str:
    who = ApproverRole(role).label.lower()
    return f"Awaiting approval: {have} of {required} from a {who}."


def refuse_decision(
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


def refuse_moved(digests: dict[int, str], requests: dict[int, Request]) -> None:
    """The approver saw `digests` (request id -> digest): refuse them all (PlanMoved) if
    the plan or GitOps change of any request awaiting a decision is not that any more.
    Each tenant's repository is read once for them all."""
    with provisioner.one_read_per_repository():
        reviews = {
            request_id: selectors.review(tenancy_request)
            for request_id, tenancy_request in sorted(requests.items())
            if tenancy_request.state in DECIDABLE_STATES
        }
    moved = [
        request_id
        for request_id, seen in reviews.items()
        if seen.plan is None or seen.digest != digests[request_id]
    ]
    if moved:
        only = reviews[moved[0]] if len(moved) == 1 else None
        raise PlanMoved(
            request_ids=moved,
            current_digest=only.digest if only else "",
            plan_error=only.plan_error if only else "",
        )


def approve_request(
    *,
    request_id: int,
    approver: User,
    plan_digest: str,
    reason: str = "",
    source_ip: str | None = None,
) -> Request:
    """Record an approval bound to the digest of the plan the approver saw; once the
    policy's number of approvals for that plan is reached, the request is approved.
    Raises NotAllowed (audited) for someone without the right, PlanMoved when the plan or
    its GitOps change is no longer the one the approver saw."""
    tenancy_request = Request.objects.select_related("tenant").get(pk=request_id)
    refuse_decision(
        tenancy_request=tenancy_request, user=approver, action="approve", source_ip=source_ip
    )
    refuse_moved({request_id: plan_digest}, {request_id: tenancy_request})
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
    all of them or, if any cannot be approved (or any plan moved: PlanMoved naming them
    all), none. They must share one policy outcome (the same rule, number of approvals and
    approver role), so one look covers them all."""
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
        refuse_decision(
            tenancy_request=tenancy_request, user=approver, action="approve", source_ip=source_ip
        )
    refuse_moved(wanted, found)
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
        tenancy_request.status_message = awaiting(
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
