"""Writes of the tenancy domain. The only place a Request changes state.

Every transition runs in a transaction holding a row lock on the request, checks the
transition table, and writes an audit event; an illegal transition raises
`IllegalTransition` and changes nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from tenants import audit, budget, policy, selectors
from tenants.choices import (
    ApproverRole,
    Decision,
    NamespaceState,
    PolicyOutcome,
    RequestKind,
    RequestState,
    RunState,
)
from tenants.errors import DomainError, IllegalTransition, NotAllowed
from tenants.models import (
    Approval,
    ApprovalRule,
    Cluster,
    Comment,
    EnvironmentTier,
    Namespace,
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


def _claim_namespaces(tenancy_request: Request) -> None:
    """Take the names a request would create, so no other request or namespace can.

    The claim counts against the tenant's budget until the request is decided; the unique
    constraint on live names is the backstop against two requests racing for one name.
    """
    payload, tenant = tenancy_request.payload, tenancy_request.tenant
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


def _release_claims(tenancy_request: Request) -> dict[str, Any]:
    released = Namespace.objects.filter(request=tenancy_request, state=NamespaceState.REQUESTED)
    names = list(released.values_list("name", flat=True))
    released.delete()
    return {"released": names} if names else {}


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
    cleaned = validate_payload(kind=kind, tenant=tenant, payload=payload)
    with transaction.atomic():
        # One admission at a time per tenant: the budget check below must see every claim.
        Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
        over = budget.overruns(
            tenant=tenant, wanted=budget.demand(tenant=tenant, kind=kind, payload=cleaned)
        )
        if over:
            raise ValidationError({field: [message] for field, message in over.items()})
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
) -> Request:
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
        actor=requester,
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
