"""Writes of the tenancy domain. The only place a Request changes state.

Every transition runs in a transaction holding a row lock on the request, checks the
transition table, and writes an audit event; an illegal transition raises
`IllegalTransition` and changes nothing.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from tenants import audit, budget, environment_rules, policy, selectors
from tenants.choices import (
    ApproverRole,
    Decision,
    EndCause,
    EnvironmentState,
    NamespaceState,
    PolicyOutcome,
    RequestKind,
    RequestState,
    Role,
    RunState,
)
from tenants.errors import DomainError, IllegalTransition, NotAllowed
from tenants.models import (
    Approval,
    ApprovalRule,
    Cluster,
    Comment,
    EnvironmentRule,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
    Run,
    Tenant,
    User,
)
from tenants.models.tokens import (
    DISPLAY_PREFIX_LENGTH,
    TOKEN_PREFIX,
    ApiToken,
    TokenScope,
    token_digest,
)
from tenants.naming import namespace_name
from tenants.payloads import validate_payload
from tenants.quantities import seconds_to_duration
from tenants.signals import request_state_changed

logger = logging.getLogger(__name__)

S = RequestState
# Ending an ephemeral environment takes nothing and widens nothing: never held for approval.
ENDING_DECISION = policy.PolicyDecision(
    rule="ephemeral-environment-end", outcome=PolicyOutcome.AUTO_APPROVE
)


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


def _claim_namespaces(tenancy_request: Request) -> None:
    """Take the names a request would create, so no other request or namespace can.

    The claim counts against the tenant's budget until the request is decided; the unique
    constraint on live names is the backstop against two requests racing for one name.
    """
    payload, tenant = tenancy_request.payload, tenancy_request.tenant
    if tenancy_request.kind == RequestKind.EPHEMERAL:
        _claim_environment(tenancy_request)
        return
    if tenancy_request.kind == RequestKind.END_ENVIRONMENT:
        EphemeralEnvironment.objects.filter(pk=payload["environment"]).update(
            state=EnvironmentState.ENDING
        )
        return
    if tenancy_request.kind == RequestKind.PROJECT:
        wanted = [(payload["app"], slug) for slug in payload["tiers"]]
    elif tenancy_request.kind == RequestKind.NAMESPACE:
        wanted = [(payload["app"], payload["tier"])]
    elif tenancy_request.kind == RequestKind.ENVIRONMENT:
        wanted = [(payload["project"], payload["tier"])]
    else:
        return
    cluster = Cluster.objects.get(name=payload["cluster"])
    tiers = {
        tier.slug: tier
        for tier in EnvironmentTier.objects.filter(slug__in=[slug for _, slug in wanted])
    }
    for app, slug in wanted:
        tier = tiers[slug]
        is_project = tenancy_request.kind == RequestKind.PROJECT
        name = namespace_name(tenant.slug, app, slug)
        try:
            with transaction.atomic():
                Namespace.objects.create(
                    name=name,
                    tenant=tenant,
                    cluster=cluster,
                    tier=tier,
                    state=NamespaceState.REQUESTED,
                    request=tenancy_request,
                    cpu_millis=tier.default_cpu_millis if is_project else payload["cpu_millis"],
                    memory_mib=tier.default_memory_mib if is_project else payload["memory_mib"],
                    storage_gib=(
                        tier.default_storage_gib if is_project else payload.get("storage_gib", 0)
                    ),
                )
        except IntegrityError as exc:
            raise ValidationError({"app": [f"{name} was just taken by another request."]}) from exc


def _claim_environment(tenancy_request: Request) -> None:
    """An ephemeral environment: its record, and its namespace's name unless it shares one."""
    payload, tenant = tenancy_request.payload, tenancy_request.tenant
    project = Project.objects.get(tenant=tenant, name=payload["project"])
    cluster = Cluster.objects.get(name=payload["cluster"])
    now = timezone.now()
    expires_at = now + timedelta(seconds=payload["ttl_seconds"])
    tier = EnvironmentTier.objects.get(slug=payload["tier"])
    longest = tier.max_ttl or settings.BERTH_EPHEMERAL_MAX_TTL
    try:
        with transaction.atomic():
            if payload["creates_namespace"]:
                namespace = Namespace.objects.create(
                    name=payload["namespace"],
                    tenant=tenant,
                    cluster=cluster,
                    tier=tier,
                    project=None if payload["shared"] else project,
                    state=NamespaceState.REQUESTED,
                    request=tenancy_request,
                    cpu_millis=payload["cpu_millis"],
                    memory_mib=payload["memory_mib"],
                    storage_gib=payload["storage_gib"],
                    expires_at=None if payload["shared"] else expires_at,
                )
            else:
                namespace = Namespace.objects.get(
                    tenant=tenant, cluster=cluster, name=payload["namespace"],
                    state=NamespaceState.ACTIVE,
                )
            environment = EphemeralEnvironment.objects.create(
                tenant=tenant,
                project=project,
                slug=payload["env_slug"],
                branch=payload["branch"],
                merge_request=payload["mr_id"],
                namespace=namespace,
                owns_namespace=payload["creates_namespace"] and not payload["shared"],
                rule_position=payload["rule_position"],
                request=tenancy_request,
                expires_at=expires_at,
                max_expires_at=max(now + longest, expires_at),
            )
    except (IntegrityError, Namespace.DoesNotExist) as exc:
        raise ValidationError({"env_slug": [
            f"{payload['namespace']} or environment {payload['env_slug']} was just taken "
            "by another request; try again."
        ]}) from exc
    audit.record(
        actor=tenancy_request.requester,
        action="environment.create",
        obj=environment,
        tenant_id=tenant.pk,
        after={
            "namespace": namespace.name,
            "shared": payload["shared"],
            "rule": payload["rule_position"],
            "expires_at": expires_at.isoformat(),
            "request": tenancy_request.pk,
        },
    )


def _release_claims(tenancy_request: Request) -> dict[str, Any]:
    ended = EphemeralEnvironment.objects.filter(
        request=tenancy_request, state=EnvironmentState.STARTING
    ).update(state=EnvironmentState.ENDED, ended_at=timezone.now())
    released = Namespace.objects.filter(request=tenancy_request, state=NamespaceState.REQUESTED)
    names = list(released.values_list("name", flat=True))
    # An environment's record keeps pointing at the name it was given: kept, but freed.
    released.filter(ephemeral_environments__isnull=False).update(
        state=NamespaceState.DECOMMISSIONED
    )
    released.filter(ephemeral_environments__isnull=True).delete()
    result: dict[str, Any] = {"released": names} if names else {}
    if ended:
        result["environment_ended"] = True
    return result


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
    if kind == RequestKind.END_ENVIRONMENT:
        raise ValidationError({"kind": [
            "An ephemeral environment is ended from its page or with "
            "POST /api/v1/environments/{id}/end/."
        ]})
    cleaned = validate_payload(kind=kind, tenant=tenant, payload=payload)
    with transaction.atomic():
        # One admission at a time per tenant: the budget check below must see every claim.
        Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
        budget.check_fits(tenant=tenant, kind=kind, payload=cleaned)
        decision = policy.decide(
            policy.attributes_for(tenant=tenant, kind=kind, payload=cleaned, requester=requester)
        )
        if decision.outcome == PolicyOutcome.DENY:
            denied = decision
        else:
            denied = None
            tenancy_request = _admit(
                tenant=tenant,
                kind=kind,
                cleaned=cleaned,
                requester=requester,
                decision=decision,
                source_ip=source_ip,
            )
    if denied is not None:
        # Recorded after the admission transaction ends, which saved nothing.
        audit.record(
            actor=requester,
            action="request.denied",
            obj=tenant,
            tenant_id=tenant.pk,
            source_ip=source_ip,
            after={"kind": kind, "payload": cleaned, "rule": denied.rule},
        )
        raise NotAllowed(denied.message or f"Denied by the approval rule {denied.rule}.")
    return tenancy_request


def _admit(
    *,
    tenant: Tenant,
    kind: str,
    cleaned: dict[str, Any],
    requester: User,
    decision: policy.PolicyDecision,
    source_ip: str | None,
    system: bool = False,
) -> Request:
    """Record an admitted request; `system` when Berth itself asks (on expiry), on behalf
    of `requester`: the audit log then names no person as its actor."""
    tenancy_request = Request.objects.create(
        tenant=tenant,
        kind=kind,
        payload=cleaned,
        requester=requester,
        policy_rule=decision.rule,
        approvals_required=decision.approvals_required,
        approver_role=decision.approver_role,
        status_message=_awaiting(decision.approvals_required, decision.approver_role, 0),
    )
    _claim_namespaces(tenancy_request)
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
            sender=Request, request_id=request_id, action="submit", state=S.SUBMITTED
        )
    )
    if decision.outcome == PolicyOutcome.AUTO_APPROVE:
        Approval.objects.create(
            request=tenancy_request,
            approver=None,
            decision=Decision.APPROVE,
            reason=f"Rule {decision.rule} approves automatically.",
        )
        tenancy_request = _transition(
            request_id=request_id,
            action="approve",
            actor=None,
            message=f"Approved automatically by rule {decision.rule}.",
        )
    return tenancy_request


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
        locked = Request.objects.select_for_update().get(pk=request_id)
        if locked.state not in TRANSITIONS["approve"].sources:
            raise IllegalTransition(
                request_id=request_id, state_label=locked.get_state_display(), action="approved"
            )
        approvals = locked.approvals.filter(decision=Decision.APPROVE, plan_digest=plan_digest)
        if approvals.filter(approver=approver).exists():
            raise DomainError("You have already approved this plan.")
        Approval.objects.create(
            request=locked,
            approver=approver,
            decision=Decision.APPROVE,
            reason=reason,
            plan_digest=plan_digest,
        )
        have = approvals.count()
        if have < locked.approvals_required:
            locked.status_message = _awaiting(locked.approvals_required, locked.approver_role, have)
            locked.save(update_fields=["status_message", "updated_at"])
            audit.record(
                actor=approver,
                action="request.approval_recorded",
                obj=locked,
                tenant_id=locked.tenant_id,
                source_ip=source_ip,
                after={
                    "approvals": have,
                    "required": locked.approvals_required,
                    "plan_digest": plan_digest,
                },
            )
            return locked
        return _transition(
            request_id=request_id,
            action="approve",
            actor=approver,
            message=reason,
            source_ip=source_ip,
            side_effect=lambda _: {"plan_digest": plan_digest},
        )


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
        return _release_claims(locked)

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
        side_effect=_release_claims,
        request_id=request_id,
        action="cancel",
        actor=actor,
        message=f"Cancelled by {actor.username}.",
        source_ip=source_ip,
    )


def _transition_opening_run(
    *,
    request_id: int,
    action: str,
    plan_digest: str,
    actor: User | None = None,
    source_ip: str | None = None,
) -> Run:
    """A transition into provisioning, with the Run that records this attempt."""
    opened: list[Run] = []

    def open_run(locked: Request) -> dict[str, Any]:
        opened.append(Run.objects.create(request=locked, plan_digest=plan_digest))
        return {"run": opened[0].pk}

    _transition(
        request_id=request_id, action=action, actor=actor, source_ip=source_ip, side_effect=open_run
    )
    return opened[0]


def start_provisioning(*, request_id: int, plan_digest: str) -> Run:
    """The worker takes an approved request: it moves to provisioning with a new Run."""
    return _transition_opening_run(
        request_id=request_id, action="start_provisioning", plan_digest=plan_digest
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
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may retry a failed request.")
    if EphemeralEnvironment.objects.filter(
        request_id=request_id, state__in=(EnvironmentState.ENDING, EnvironmentState.ENDED)
    ).exists():
        raise DomainError("Its ephemeral environment has ended since: there is nothing to retry.")
    return _transition_opening_run(
        request_id=request_id,
        action="retry",
        plan_digest=plan_digest,
        actor=actor,
        source_ip=source_ip,
    )


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


def save_approval_rule(*, form, actor: User, source_ip: str | None = None) -> ApprovalRule:  # noqa: ANN001
    """Save a validated ApprovalRuleForm (its condition compiled) and audit the change."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may change approval rules.")
    before = None
    if form.instance.pk:
        before = {
            k: str(v)
            for k, v in ApprovalRule.objects.filter(pk=form.instance.pk)
            .values(*form.Meta.fields)
            .first()
            .items()
        }
    with transaction.atomic():
        rule = form.save()
        audit.record(
            actor=actor,
            action="policy.rule_saved",
            obj=rule,
            before=before,
            after={field: str(getattr(rule, field)) for field in form.Meta.fields},
            source_ip=source_ip,
        )
    return rule


def onboard_tenant(
    *,
    actor: User,
    slug: str,
    name: str,
    groups: dict[str, list[str]],
    repo_url: str,
    branch: str,
    path: str,
    credentials: str,
    engine: str,
    budget_limits: dict[str, int],
    clusters: list[Cluster],
    tiers: list[EnvironmentTier],
    allowed_domains: list[str],
    notify_emails: list[str],
    source_ip: str | None = None,
) -> Tenant:
    """Create a tenant in one step: who belongs, where its GitOps lives, what it may use."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may onboard tenants.")
    tenant = Tenant(
        slug=slug,
        name=name,
        owner_groups=groups.get("owner", []),
        member_groups=groups.get("member", []),
        viewer_groups=groups.get("viewer", []),
        gitops_repo_url=repo_url,
        gitops_branch=branch or "main",
        gitops_path=path,
        gitops_credentials=credentials,
        gitops_engine=engine,
        budget_cpu_millis=budget_limits["cpu_millis"],
        budget_memory_mib=budget_limits["memory_mib"],
        budget_storage_gib=budget_limits["storage_gib"],
        budget_namespaces=budget_limits["namespaces"],
        allowed_domains=allowed_domains,
        notify_emails=notify_emails,
    )
    try:
        tenant.full_clean()
    except DjangoValidationError as exc:
        raise ValidationError(exc.message_dict) from exc
    with transaction.atomic():
        tenant.save()
        tenant.allowed_clusters.set(clusters)
        tenant.allowed_tiers.set(tiers)
        audit.record(
            actor=actor,
            action="tenant.onboard",
            obj=tenant,
            tenant_id=tenant.pk,
            source_ip=source_ip,
            after={
                "slug": slug,
                "groups": groups,
                "repo_url": repo_url,
                "engine": engine,
                "budget": budget_limits,
                "clusters": [c.name for c in clusters],
                "tiers": [t.slug for t in tiers],
                "credentials_set": bool(credentials),
            },
        )
    return tenant


# --- tenants and clusters changed over the REST API ------------------------------------------

# Stored encrypted and never shown: the audit log says whether they changed, not what to.
SECRET_FIELDS = frozenset({"gitops_credentials", "webhook_secret", "credentials"})


def _audit_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_audit_value(item) for item in value]
    if hasattr(value, "_meta"):
        return str(value)
    return value


def _apply_changes(
    obj: Tenant | Cluster, changes: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Set plain fields on `obj`; returns the before/after of what changed, secrets masked."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for field, value in changes.items():
        old = getattr(obj, field)
        if old == value:
            continue
        setattr(obj, field, value)
        if field in SECRET_FIELDS:
            before[field], after[field] = "(set)" if old else "", "(set)" if value else ""
        else:
            before[field], after[field] = _audit_value(old), _audit_value(value)
    return before, after


def _full_clean(obj: Tenant | Cluster) -> None:
    try:
        obj.full_clean()
    except DjangoValidationError as exc:
        raise ValidationError(exc.message_dict) from exc


def update_tenant(
    *,
    actor: User,
    tenant: Tenant,
    changes: dict[str, Any],
    clusters: list[Cluster] | None = None,
    tiers: list[EnvironmentTier] | None = None,
    source_ip: str | None = None,
) -> Tenant:
    """Change a tenant's groups, budget, GitOps settings or what it may use (not its slug).

    Memberships follow the new groups at each member's next sign-in, as they always do.
    """
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may change tenants.")
    if "slug" in changes and changes["slug"] != tenant.slug:
        raise ValidationError({"slug": ["A tenant's slug names its namespaces; it cannot change."]})
    changes = {field: value for field, value in changes.items() if field != "slug"}
    with transaction.atomic():
        locked = Tenant.objects.select_for_update().get(pk=tenant.pk)
        before, after = _apply_changes(locked, changes)
        _full_clean(locked)
        locked.save()
        for relation, wanted, label in (
            ("allowed_clusters", clusters, "name"),
            ("allowed_tiers", tiers, "slug"),
        ):
            if wanted is None:
                continue
            manager = getattr(locked, relation)
            old = sorted(manager.values_list(label, flat=True))
            new = sorted(getattr(item, label) for item in wanted)
            if old != new:
                manager.set(wanted)
                before[relation], after[relation] = old, new
        if after:
            audit.record(
                actor=actor,
                action="tenant.update",
                obj=locked,
                tenant_id=locked.pk,
                before=before,
                after=after,
                source_ip=source_ip,
            )
    return locked


def save_cluster(
    *,
    actor: User,
    cluster: Cluster | None,
    values: dict[str, Any],
    source_ip: str | None = None,
) -> Cluster:
    """Add a cluster (`cluster` None) or change one; credentials are encrypted at rest."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may add or change clusters.")
    with transaction.atomic():
        if cluster is None:
            target, action = Cluster(), "cluster.create"
        else:
            target = Cluster.objects.select_for_update().get(pk=cluster.pk)
            action = "cluster.update"
        before, after = _apply_changes(target, values)
        _full_clean(target)
        target.save()
        if after or action == "cluster.create":
            audit.record(
                actor=actor,
                action=action,
                obj=target,
                before=before if cluster is not None else None,
                after=after,
                source_ip=source_ip,
            )
    return target


# --- personal API tokens -------------------------------------------------------------------


def create_api_token(
    *,
    user: User,
    name: str,
    scopes: list[str],
    expires_at: Any = None,
    source_ip: str | None = None,
) -> tuple[ApiToken, str]:
    """Make a token for `user`; returns it and its value, which is never stored or shown again."""
    errors: dict[str, list[str]] = {}
    if not name.strip():
        errors["name"] = ["Give the token a name that says what it is for."]
    unknown = sorted(set(scopes) - set(TokenScope.values))
    if unknown or not scopes:
        errors["scopes"] = [
            f"Choose one or more of {', '.join(TokenScope.values)}"
            + (f"; unknown: {', '.join(unknown)}." if unknown else ".")
        ]
    if expires_at is not None and expires_at <= timezone.now():
        errors["expires_at"] = ["The expiry must be in the future."]
    if errors:
        raise ValidationError(errors)
    value = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ordered = [scope for scope in TokenScope.values if scope in scopes]
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name.strip(),
            prefix=value[:DISPLAY_PREFIX_LENGTH],
            digest=token_digest(value),
            scopes=ordered,
            expires_at=expires_at,
        )
        audit.record(
            actor=user,
            action="api_token.create",
            obj=token,
            source_ip=source_ip,
            after={
                "name": token.name,
                "prefix": token.prefix,
                "scopes": ordered,
                "expires_at": expires_at.isoformat() if expires_at else None,
            },
        )
    return token, value


def revoke_api_token(*, actor: User, token: ApiToken, source_ip: str | None = None) -> ApiToken:
    """Revoke one of the actor's own tokens; it stops working at once. Revoking twice is a no-op."""
    if token.user_id != actor.pk:
        raise NotAllowed("You may revoke only your own tokens.")
    with transaction.atomic():
        locked = ApiToken.objects.select_for_update().get(pk=token.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
            audit.record(
                actor=actor,
                action="api_token.revoke",
                obj=locked,
                source_ip=source_ip,
                after={"name": locked.name, "prefix": locked.prefix},
            )
    return locked


# --- ephemeral environments ------------------------------------------------------------------


def extend_environment(
    *, environment_id: int, actor: User, ttl_seconds: int, source_ip: str | None = None
) -> EphemeralEnvironment:
    """Let an environment live `ttl_seconds` from now, never past its maximum TTL."""
    with transaction.atomic():
        environment = (
            EphemeralEnvironment.objects.select_for_update(of=("self",))
            .select_related("tenant", "request")
            .get(pk=environment_id)
        )
        if not selectors.may_manage_environment(actor, environment):
            raise NotAllowed(
                "Only the environment's creator, the tenant's owners and platform admins may "
                "extend it."
            )
        if environment.state not in (EnvironmentState.STARTING, EnvironmentState.LIVE):
            raise DomainError(
                f"Environment {environment.slug} is {environment.get_state_display().lower()}: "
                "it can no longer be extended."
            )
        now = timezone.now()
        wanted = now + timedelta(seconds=ttl_seconds)
        if wanted > environment.max_expires_at:
            left = int((environment.max_expires_at - now).total_seconds()) // 60 * 60
            raise ValidationError({"ttl": [
                f"{environment.slug} may live until {environment.max_expires_at:%Y-%m-%d %H:%M} "
                f"UTC at most (its tier's maximum TTL): ask for at most "
                f"{seconds_to_duration(max(left, 0))}."
            ]})
        before = environment.expires_at
        environment.expires_at, environment.warned_at = wanted, None
        environment.save(update_fields=["expires_at", "warned_at"])
        if environment.owns_namespace:
            Namespace.objects.filter(pk=environment.namespace_id).update(expires_at=wanted)
        audit.record(
            actor=actor,
            action="environment.extend",
            obj=environment,
            tenant_id=environment.tenant_id,
            before={"expires_at": before.isoformat()},
            after={"expires_at": wanted.isoformat()},
            source_ip=source_ip,
        )
    return environment


def end_environment(
    *,
    environment_id: int,
    actor: User | None,
    cause: str,
    reason: str = "",
    source_ip: str | None = None,
) -> Request | None:
    """End an ephemeral environment: its namespace (if its own) is deleted and its GitOps
    files removed, in one commit, by an end request that is approved at once.

    `actor` None is Berth itself (expiry). One not yet decided is simply cancelled
    (returns None). Ending one that is already ending or ended raises DomainError."""
    environment = EphemeralEnvironment.objects.select_related("tenant", "request").get(
        pk=environment_id
    )
    tenant = environment.tenant
    if actor is not None and not selectors.may_end_environment(actor, environment):
        raise NotAllowed(
            f"Only members and owners of {tenant.slug} (and platform admins) may end its "
            "environments."
        )
    if (
        environment.state == EnvironmentState.STARTING
        and environment.request.state == RequestState.SUBMITTED
    ):
        _transition(
            request_id=environment.request_id,
            action="cancel",
            actor=actor,
            message=f"Environment {environment.slug} ended before it was decided ({cause}).",
            source_ip=source_ip,
            side_effect=_release_claims,
        )
        return None
    cleaned = validate_payload(
        kind=RequestKind.END_ENVIRONMENT,
        tenant=tenant,
        payload={"environment": environment_id, "cause": cause, "reason": reason},
    )
    with transaction.atomic():
        locked = EphemeralEnvironment.objects.select_for_update().get(pk=environment_id)
        if locked.state == EnvironmentState.ENDING or locked.state == EnvironmentState.ENDED:
            raise DomainError(f"Environment {locked.slug} is already {locked.state}.")
        return _admit(
            tenant=tenant,
            kind=RequestKind.END_ENVIRONMENT,
            cleaned=cleaned,
            requester=actor or environment.request.requester,
            decision=ENDING_DECISION,
            source_ip=source_ip,
            system=actor is None,
        )


def expire_environments(*, now: Any = None) -> list[int]:
    """End every environment past its expiry; returns their ids. Safe to run concurrently
    and repeatedly: one already ending is skipped."""
    now = now or timezone.now()
    due = EphemeralEnvironment.objects.filter(
        expires_at__lte=now, state__in=(EnvironmentState.STARTING, EnvironmentState.LIVE)
    ).values_list("pk", flat=True)
    ended = []
    for environment_id in list(due):
        try:
            end_environment(
                environment_id=environment_id,
                actor=None,
                cause=EndCause.EXPIRED,
                reason="Its time to live ran out.",
            )
        except (DomainError, ValidationError, IllegalTransition) as exc:
            # Another worker got there first, or it is still being provisioned: next round.
            logger.info("environment %s not ended yet: %s", environment_id, exc)
            continue
        ended.append(environment_id)
    return ended


def environments_to_warn(*, now: Any = None) -> list[EphemeralEnvironment]:
    """Live environments expiring within the warning window whose owners were not told;
    each is marked as warned (and audited) as it is returned."""
    now = now or timezone.now()
    warned = []
    due = EphemeralEnvironment.objects.filter(
        state=EnvironmentState.LIVE,
        warned_at__isnull=True,
        expires_at__gt=now,
        expires_at__lte=now + settings.EXPIRY_WARNING,
    ).values_list("pk", flat=True)
    for environment_id in list(due):
        with transaction.atomic():
            taken = EphemeralEnvironment.objects.filter(
                pk=environment_id, warned_at__isnull=True
            ).update(warned_at=now)
            if not taken:
                continue  # another beat run warned it
            environment = EphemeralEnvironment.objects.select_related("tenant", "project").get(
                pk=environment_id
            )
            audit.record(
                actor=None,
                action="environment.expiry_warning",
                obj=environment,
                tenant_id=environment.tenant_id,
                after={"expires_at": environment.expires_at.isoformat()},
            )
        warned.append(environment)
    return warned


def _rule_row(rule: EnvironmentRule) -> dict[str, Any]:
    return {
        "if": rule.condition,
        "namespace": rule.namespace_template,
        "refuse": rule.refuse,
        "message": rule.message,
    }


MAX_ENVIRONMENT_RULES = 50


def replace_environment_rules(
    *, tenant: Tenant, rules: list[dict[str, Any]], actor: User, source_ip: str | None = None
) -> list[EnvironmentRule]:
    """Replace the tenant's ordered environment rules with `rules` (dicts of if, namespace,
    refuse, message), all validated first: one bad rule saves none. Owners and platform
    admins only. Rules only choose names inside the tenant's prefix, within its budget."""
    if not (
        selectors.is_platform_admin(actor) or selectors.role_in(actor, tenant) == Role.OWNER
    ):
        raise NotAllowed(f"Only owners of {tenant.slug} and platform admins may change its "
                         "environment rules.")
    if len(rules) > MAX_ENVIRONMENT_RULES:
        raise ValidationError({"rules": [
            f"At most {MAX_ENVIRONMENT_RULES} rules; a template with variables covers many "
            "environments in one rule."
        ]})
    problems = []
    cleaned = []
    for number, rule in enumerate(rules, start=1):
        row = {
            "if": str(rule.get("if") or "").strip(),
            "namespace": str(rule.get("namespace") or "").strip(),
            "refuse": bool(rule.get("refuse", False)),
            "message": str(rule.get("message") or "").strip()[:300],
        }
        try:
            environment_rules.check_rule(
                tenant=tenant.slug, condition=row["if"], namespace=row["namespace"],
                refuse=row["refuse"],
            )
        except environment_rules.RuleError as exc:
            problems.append(f"Rule {number}: {exc}")
        cleaned.append(row)
    if problems:
        raise ValidationError({"rules": problems})
    with transaction.atomic():
        Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
        before = [_rule_row(rule) for rule in tenant.environment_rules.all()]
        tenant.environment_rules.all().delete()
        saved = [
            EnvironmentRule.objects.create(
                tenant=tenant,
                position=number,
                condition=row["if"],
                namespace_template="" if row["refuse"] else row["namespace"],
                refuse=row["refuse"],
                message=row["message"],
            )
            for number, row in enumerate(cleaned, start=1)
        ]
        if before != [_rule_row(rule) for rule in saved]:
            audit.record(
                actor=actor,
                action="tenant.environment_rules",
                obj=tenant,
                tenant_id=tenant.pk,
                before={"rules": before},
                after={"rules": [_rule_row(rule) for rule in saved]},
                source_ip=source_ip,
            )
    return saved
