"""Upgrade campaigns: a platform admin rolls what the current tier definitions produce out
to the namespaces made under older ones, with the diff of each, under the approval rules,
in waves (a canary first) that pause at the first failure."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tenants import audit, policy, provisioner
from tenants.choices import (
    ApproverRole,
    CampaignState,
    NamespaceState,
    PolicyOutcome,
    TargetState,
)
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import (
    BundleRevision,
    CampaignCommit,
    CampaignTarget,
    EnvironmentTier,
    Namespace,
    TierRevision,
    UpgradeCampaign,
    User,
)
from tenants.selectors import is_platform_admin
from tenants.services import definitions
from tenants.signals import campaign_moved


class CampaignMove(DomainError):
    """The campaign is not in a state this move starts from."""


def _admin(actor: User, what: str) -> None:
    if not is_platform_admin(actor):
        raise NotAllowed(f"Only platform admins may {what}.")


def _attributes(tier: EnvironmentTier | None, actor: User) -> dict:
    tiers = (
        [tier.slug]
        if tier
        else list(EnvironmentTier.objects.order_by("position").values_list("slug", flat=True))
    )
    return {
        "kind": "upgrade",
        "tenant": "",
        "tier": tiers[-1] if tiers else "",
        "tiers": tiers,
        "cluster": "",
        "cpu_millis": 0,
        "memory_mib": 0,
        "storage_gib": 0,
        "ephemeral": False,
        "requester": actor.username,
        "requester_role": "",
        "requester_groups": list(actor.last_groups or []),
        "requester_platform_admin": True,
    }


def _signal(campaign: UpgradeCampaign, action: str) -> None:
    transaction.on_commit(
        lambda: campaign_moved.send(sender=UpgradeCampaign, campaign_id=campaign.pk, action=action)
    )


def create_campaign(
    *,
    actor: User,
    tier: EnvironmentTier | None,
    reason: str,
    canary: int = 1,
    batch: int = 10,
    source_ip: str | None = None,
) -> UpgradeCampaign:
    """Compute what the current definitions would change in every active namespace (of the
    tier), group it by identical diff and ask the approval rules (`request.kind ==
    "upgrade"`); a rule that names tenant owners still needs a platform admin, since a
    campaign reaches many tenants."""
    _admin(actor, "start upgrade campaigns")
    errors = {}
    if not reason.strip():
        errors["reason"] = ["Say why: tenants read it on their namespaces."]
    if canary < 1:
        errors["canary"] = ["The canary is at least one namespace."]
    if batch < 1:
        errors["batch"] = ["A wave is at least one namespace."]
    if errors:
        raise InvalidInput.of(errors)
    found = provisioner.campaign_changes(tier.pk if tier else None)
    changes, repositories = found.namespaces, found.repositories
    bundle = definitions.current_bundle_revision()
    revisions = {
        each.pk: definitions.current_tier_revision(tier=each)
        for each in ([tier] if tier else EnvironmentTier.objects.all())
    }
    _record_unchanged(
        revisions,
        bundle,
        changed=[namespace.pk for namespace, _ in changes],
        files_behind=[(t.pk, c.pk) for t, c, _ in repositories],
    )
    if not changes and not repositories:
        raise InvalidInput.of(
            {
                "tier": [
                    "No active namespace would change: every one already "
                    "holds what the current definitions produce, and "
                    "its tenant's repository what the current "
                    "templates write."
                ]
            }
        )
    decision = policy.decide(_attributes(tier, actor))
    if decision.outcome == PolicyOutcome.DENY:
        raise InvalidInput.of({"tier": [decision.message or f"Denied by rule {decision.rule}."]})
    approved = decision.outcome == PolicyOutcome.AUTO_APPROVE
    with transaction.atomic():
        campaign = UpgradeCampaign.objects.create(
            tier=tier,
            reason=reason.strip(),
            created_by=actor,
            canary=canary,
            batch=batch,
            policy_rule=decision.rule,
            approver_role=ApproverRole.PLATFORM_ADMIN,
            state=CampaignState.ROLLING if approved else CampaignState.AWAITING_APPROVAL,
            decided_at=timezone.now() if approved else None,
            tier_revision=revisions[tier.pk] if tier else None,
            bundle_revision=bundle,
            status_message=f"Approved by rule {decision.rule}."
            if approved
            else f"Awaiting a platform admin's approval (rule {decision.rule}).",
        )
        CampaignTarget.objects.bulk_create(
            CampaignTarget(
                campaign=campaign,
                namespace=namespace,
                wave=_wave(i, canary, batch),
                group=change["group"],
                diff=change["diff"],
                desired=change["desired"],
                before=change["before"],
                from_tier_revision_id=namespace.tier_revision_id,
                from_bundle_revision_id=namespace.bundle_revision_id,
                to_tier_revision=revisions[namespace.tier_id],
            )
            for i, (namespace, change) in enumerate(changes)
        )
        CampaignCommit.objects.bulk_create(
            CampaignCommit(
                campaign=campaign,
                tenant=tenant,
                cluster=cluster,
                diff=change["diff"],
                paths=change["paths"],
            )
            for tenant, cluster, change in repositories
        )
        audit.record(
            actor=actor,
            action="campaign.create",
            obj=campaign,
            source_ip=source_ip,
            after={
                "tier": tier.slug if tier else None,
                "namespaces": len(changes),
                "repositories": len(repositories),
                "rule": decision.rule,
                "outcome": decision.outcome,
            },
        )
        if approved:
            _signal(campaign, "roll")
    return campaign


def _record_unchanged(
    revisions: dict[int, TierRevision],
    bundle: BundleRevision,
    *,
    changed: list[int],
    files_behind: list[tuple[int, int]],
) -> None:
    """Namespaces the current definitions would not change already run them: their records
    say so (the campaign has nothing to apply there). Their templates' version moves too,
    unless their tenant's files on that cluster are still to be written."""
    for tier_id, revision in revisions.items():
        unchanged = Namespace.objects.filter(
            tier_id=tier_id, state=NamespaceState.ACTIVE, cluster__plan_only=False
        ).exclude(pk__in=changed)
        unchanged.update(tier_revision=revision)
        for tenant_id, cluster_id in files_behind:
            unchanged = unchanged.exclude(tenant_id=tenant_id, cluster_id=cluster_id)
        unchanged.update(bundle_revision=bundle)


def _wave(index: int, canary: int, batch: int) -> int:
    return 1 if index < canary else 2 + (index - canary) // batch


def _move(
    campaign_id: int,
    actor: User,
    *,
    allowed: tuple[str, ...],
    to: str,
    action: str,
    message: str,
    source_ip: str | None,
) -> UpgradeCampaign:
    with transaction.atomic():
        campaign = UpgradeCampaign.objects.select_for_update().get(pk=campaign_id)
        if campaign.state not in allowed:
            raise CampaignMove(
                f"Campaign #{campaign.pk} is "
                f"{campaign.get_state_display().lower()}; it cannot be "
                f"{action} from there."
            )
        before = campaign.state
        campaign.state, campaign.status_message = to, message
        fields = ["state", "status_message"]
        if action in ("approved", "rejected"):
            campaign.decided_by, campaign.decided_at = actor, timezone.now()
            fields += ["decided_by", "decided_at"]
        campaign.save(update_fields=fields)
        audit.record(
            actor=actor,
            action=f"campaign.{action}",
            obj=campaign,
            before={"state": before},
            after={"state": to},
            source_ip=source_ip,
        )
    return campaign


def approve_campaign(
    *, campaign_id: int, actor: User, source_ip: str | None = None
) -> UpgradeCampaign:
    _admin(actor, "approve upgrade campaigns")
    if UpgradeCampaign.objects.filter(pk=campaign_id, created_by=actor).exists():
        raise NotAllowed("Nobody may approve their own campaign.")
    campaign = _move(
        campaign_id,
        actor,
        allowed=(CampaignState.AWAITING_APPROVAL,),
        to=CampaignState.ROLLING,
        action="approved",
        message=f"Approved by {actor.username}; rolling out.",
        source_ip=source_ip,
    )
    _signal(campaign, "roll")
    return campaign


def reject_campaign(
    *, campaign_id: int, actor: User, source_ip: str | None = None
) -> UpgradeCampaign:
    _admin(actor, "reject upgrade campaigns")
    return _move(
        campaign_id,
        actor,
        allowed=(CampaignState.AWAITING_APPROVAL,),
        to=CampaignState.REJECTED,
        action="rejected",
        message=f"Rejected by {actor.username}.",
        source_ip=source_ip,
    )


def pause_campaign(
    *, campaign_id: int, actor: User, source_ip: str | None = None
) -> UpgradeCampaign:
    _admin(actor, "pause upgrade campaigns")
    return _move(
        campaign_id,
        actor,
        allowed=(CampaignState.ROLLING,),
        to=CampaignState.PAUSED,
        action="paused",
        message=f"Paused by {actor.username}.",
        source_ip=source_ip,
    )


def resume_campaign(
    *, campaign_id: int, actor: User, source_ip: str | None = None
) -> UpgradeCampaign:
    """Roll on from where it stopped; a failed namespace is tried again first."""
    _admin(actor, "resume upgrade campaigns")
    campaign = _move(
        campaign_id,
        actor,
        allowed=(CampaignState.PAUSED,),
        to=CampaignState.ROLLING,
        action="resumed",
        message=f"Resumed by {actor.username}.",
        source_ip=source_ip,
    )
    CampaignTarget.objects.filter(campaign=campaign, state=TargetState.FAILED).update(
        state=TargetState.PENDING
    )
    _signal(campaign, "roll")
    return campaign


def roll_back_campaign(
    *, campaign_id: int, actor: User, source_ip: str | None = None
) -> UpgradeCampaign:
    """Every namespace the campaign reached goes back to what it held before."""
    _admin(actor, "roll back upgrade campaigns")
    campaign = _move(
        campaign_id,
        actor,
        allowed=(CampaignState.PAUSED, CampaignState.DONE),
        to=CampaignState.ROLLING_BACK,
        action="rolling back",
        message=f"Rollback started by {actor.username}.",
        source_ip=source_ip,
    )
    _signal(campaign, "roll_back")
    return campaign


# The moves people make on a campaign, by the name pages and the API use.
CAMPAIGN_MOVES = {
    "approve": approve_campaign,
    "reject": reject_campaign,
    "pause": pause_campaign,
    "resume": resume_campaign,
    "rollback": roll_back_campaign,
}
