"""An upgrade campaign's progress as its worker rolls it out or back: the worker's lease,
each namespace reached or failed, each repository's files filed as a tenant_sync request, and
the campaign paused or finished."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from tenants import audit
from tenants.choices import (
    CampaignState,
    NamespaceState,
    RequestKind,
    RequestState,
    TargetState,
)
from tenants.errors import DomainError
from tenants.models import (
    CampaignCommit,
    CampaignTarget,
    Namespace,
    Request,
    UpgradeCampaign,
)
from tenants.services import submit_request


def acquire_campaign_lease(*, campaign_id: int, owner: str, seconds: float) -> bool:
    """Take the campaign's lease if it is free or lapsed; True when this worker holds it."""
    now = timezone.now()
    return (
        UpgradeCampaign.objects.filter(pk=campaign_id)
        .filter(
            Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(lease_owner=owner)
        )
        .update(lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds))
        == 1
    )


def renew_campaign_lease(*, campaign_id: int, owner: str, seconds: float) -> None:
    UpgradeCampaign.objects.filter(pk=campaign_id, lease_owner=owner).update(
        lease_expires_at=timezone.now() + timedelta(seconds=seconds)
    )


def release_campaign_lease(*, campaign_id: int, owner: str) -> None:
    UpgradeCampaign.objects.filter(pk=campaign_id, lease_owner=owner).update(
        lease_owner="", lease_expires_at=None
    )


def move_pin(*, target_id: int, back: bool = False) -> None:
    """The namespace's desired definitions: the campaign's (or, `back`, what it ran before);
    its key's reconcile makes the cluster follow."""
    target = CampaignTarget.objects.get(pk=target_id)
    if back:
        Namespace.objects.filter(pk=target.namespace_id).update(
            tier_revision=target.from_tier_revision_id,
            bundle_revision=target.from_bundle_revision_id,
        )
    else:
        Namespace.objects.filter(pk=target.namespace_id).update(
            tier_revision=target.to_tier_revision_id
        )


@transaction.atomic
def campaign_target_awaiting_merge(*, target_id: int) -> None:
    """Merge-request mode: the pin moves now (the repository change is rendered from it),
    the cluster after the merge (reconcile.gates.merge_gate holds the key until then)."""
    move_pin(target_id=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(state=TargetState.AWAITING_MERGE, error="")


@transaction.atomic
def campaign_target_applied(*, target_id: int) -> None:
    """The namespace now runs the revisions the campaign rolls out."""
    target = CampaignTarget.objects.select_related("campaign", "namespace").get(pk=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(
        state=TargetState.APPLIED, error="", applied_at=timezone.now()
    )
    moved: dict[str, Any] = {"tier_revision": target.to_tier_revision_id}
    if not CampaignCommit.objects.filter(  # else its templates' version moves with its files
        campaign=target.campaign,
        tenant_id=target.namespace.tenant_id,
        cluster_id=target.namespace.cluster_id,
        state=TargetState.PENDING,
    ).exists():
        moved["bundle_revision"] = target.campaign.bundle_revision_id
    Namespace.objects.filter(pk=target.namespace_id).update(**moved)


def campaign_target_failed(*, target_id: int, error: str) -> None:
    """The first failure pauses the campaign: nothing more rolls out until someone looks;
    the namespace's pin is back on what it ran."""
    with transaction.atomic():
        move_pin(target_id=target_id, back=True)
        target = CampaignTarget.objects.select_related("namespace").get(pk=target_id)
        target.state, target.error = TargetState.FAILED, error
        target.save(update_fields=["state", "error"])
        _pause(
            target.campaign,
            f"Paused: {target.namespace.name} failed: {error}",
            action="campaign.paused",
            after={"namespace": target.namespace.name, "error": error},
        )


def file_campaign_commit(*, commit_id: int, reviewed: bool = False) -> bool:
    """File the tenant_sync request whose commit writes a repository's files for a campaign
    (an open one for that tenant and cluster serves as well: it renders when it runs); the
    campaign's namespaces there now run its templates. False, and the campaign paused, when
    the rules or the request's checks refuse it."""
    commit = CampaignCommit.objects.select_related("campaign__created_by", "tenant", "cluster").get(
        pk=commit_id
    )
    campaign, cluster = commit.campaign, commit.cluster.name
    filed = Request.objects.filter(
        tenant=commit.tenant,
        kind=RequestKind.TENANT_SYNC,
        payload__cluster=cluster,
        state__in=(RequestState.SUBMITTED, RequestState.APPROVED),
    ).first()
    try:
        filed = filed or submit_request(
            tenant=commit.tenant,
            kind=RequestKind.TENANT_SYNC,
            requester=campaign.created_by,
            payload={
                "cluster": cluster,
                "reason": f"Upgrade campaign #{campaign.pk}: {campaign.reason}",
            },
        )
    except DomainError as error:  # refused input too: its messages, as plain text
        message = str(error)
        with transaction.atomic():
            CampaignCommit.objects.filter(pk=commit.pk).update(
                state=TargetState.FAILED, error=message
            )
            _pause(
                campaign,
                f"Paused: {commit.tenant.slug}'s files on {cluster} were not filed: {message}",
                action="campaign.paused",
                after={"tenant": commit.tenant.slug, "cluster": cluster, "error": message},
            )
        return False
    with transaction.atomic():
        # Reviewed: it counts as done once its pull request is merged and its run is over.
        CampaignCommit.objects.filter(pk=commit.pk).update(
            state=TargetState.AWAITING_MERGE if reviewed else TargetState.FILED,
            request=filed,
            error="",
        )
        reached = Namespace.objects.filter(
            tenant=commit.tenant, cluster=commit.cluster, state=NamespaceState.ACTIVE
        )
        if campaign.tier_id:
            reached = reached.filter(tier_id=campaign.tier_id)
        reached.update(bundle_revision=campaign.bundle_revision_id)
    return True


def outstanding(*, campaign_id: int) -> int:
    """What the campaign still waits for once its waves are through: repository changes
    not yet run (a tenant_sync awaiting its rules, its worker or its merge) and namespaces
    whose cluster changes with a merge. Said on the campaign."""
    waiting = CampaignTarget.objects.filter(
        campaign_id=campaign_id, state=TargetState.AWAITING_MERGE
    ).count()
    changes = (
        CampaignCommit.objects.filter(
            campaign_id=campaign_id, state__in=(TargetState.FILED, TargetState.AWAITING_MERGE)
        )
        .exclude(request__state=RequestState.READY)
        .count()
    )
    if waiting or changes:
        UpgradeCampaign.objects.filter(pk=campaign_id).update(
            status_message=f"Waiting for {changes} repository change(s) to be made (merged, "
            f"where reviewed); {waiting} namespace(s) change on the cluster with theirs."
        )
    return waiting + changes


def settle_campaign_syncs(*, request_ids: list[int], action: str) -> list[int]:
    """A campaign's tenant_sync ended: run (its repository, and where reviewed its
    namespaces' clusters, now hold the campaign's revision), closed unmerged (they are back
    on what they ran, everywhere, and shown as returned), or failed or rejected (the
    campaign pauses). Returns the campaigns this settled."""
    moved = []
    for commit in CampaignCommit.objects.filter(
        request_id__in=request_ids, state__in=(TargetState.FILED, TargetState.AWAITING_MERGE)
    ).select_related("campaign", "tenant", "cluster"):
        targets = CampaignTarget.objects.filter(
            campaign=commit.campaign,
            namespace__tenant=commit.tenant,
            namespace__cluster=commit.cluster,
            state=TargetState.AWAITING_MERGE,
        )
        with transaction.atomic():
            if action == "mark_ready":
                targets.update(state=TargetState.APPLIED, applied_at=timezone.now())
                CampaignCommit.objects.filter(pk=commit.pk).update(state=TargetState.APPLIED)
            elif action == "return_unmerged":
                _return(commit, list(targets.select_related("namespace")))
            elif action in ("mark_failed", "reject"):
                CampaignCommit.objects.filter(pk=commit.pk).update(
                    state=TargetState.FAILED, error=f"request #{commit.request_id} failed"
                )
                for target_id in targets.values_list("pk", flat=True):
                    campaign_target_failed(
                        target_id=target_id, error=f"request #{commit.request_id} failed"
                    )
                _pause(
                    commit.campaign,
                    f"Paused: {commit.tenant.slug}'s files on {commit.cluster.name} were not "
                    f"written: request #{commit.request_id} {action.removeprefix('mark_')}ed.",
                    action="campaign.paused",
                    after={"tenant": commit.tenant.slug, "request": commit.request_id},
                )
        moved.append(commit.campaign_id)
    return moved


def _return(commit: CampaignCommit, targets: list[CampaignTarget]) -> None:
    """The reviewer closed the pull request: the namespaces' pins go back to what they ran
    (their clusters never moved), and the campaign says so, target by target."""
    for target in targets:
        move_pin(target_id=target.pk, back=True)
    CampaignTarget.objects.filter(pk__in=[t.pk for t in targets]).update(
        state=TargetState.RETURNED, error="Its pull request was closed unmerged."
    )
    CampaignCommit.objects.filter(pk=commit.pk).update(
        state=TargetState.RETURNED, error="Its pull request was closed unmerged."
    )
    audit.record(
        actor=None,
        action="campaign.returned",
        obj=commit.campaign,
        after={
            "tenant": commit.tenant.slug,
            "cluster": commit.cluster.name,
            "request": commit.request_id,
            "namespaces": [t.namespace.name for t in targets],
        },
    )


def finish_campaign(*, campaign_id: int) -> None:
    campaign = UpgradeCampaign.objects.get(pk=campaign_id)
    campaign.state, campaign.finished_at = CampaignState.DONE, timezone.now()
    commits = campaign.commits.count()
    applied = campaign.targets.filter(state=TargetState.APPLIED).count()
    returned = campaign.targets.filter(state=TargetState.RETURNED).count()
    campaign.status_message = (
        f"Applied to {applied} namespace(s)."
        + (f" {commits} repository commit(s) filed as tenant_sync requests." if commits else "")
        + (f" {returned} returned: their pull request was closed." if returned else "")
    )
    campaign.save(update_fields=["state", "finished_at", "status_message"])
    audit.record(actor=None, action="campaign.done", obj=campaign)


@transaction.atomic
def campaign_target_rolled_back(*, target_id: int) -> None:
    """The namespace runs what it ran before the campaign again."""
    target = CampaignTarget.objects.get(pk=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(state=TargetState.ROLLED_BACK, error="")
    Namespace.objects.filter(pk=target.namespace_id).update(
        tier_revision=target.from_tier_revision_id, bundle_revision=target.from_bundle_revision_id
    )


def campaign_rollback_failed(*, target_id: int, error: str) -> None:
    target = CampaignTarget.objects.select_related("namespace").get(pk=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(error=error)
    _pause(
        target.campaign,
        f"Rollback paused: {target.namespace.name} failed: {error}",
        action="campaign.rollback_paused",
        after={"namespace": target.namespace.name, "error": error},
    )


def finish_rollback(*, campaign_id: int) -> None:
    campaign = UpgradeCampaign.objects.get(pk=campaign_id)
    campaign.state, campaign.finished_at = CampaignState.ROLLED_BACK, timezone.now()
    campaign.status_message = "Every namespace it reached holds what it held before."
    campaign.save(update_fields=["state", "finished_at", "status_message"])
    audit.record(actor=None, action="campaign.rolled_back", obj=campaign)


def _pause(campaign: UpgradeCampaign, message: str, *, action: str, after: dict[str, Any]) -> None:
    """Nothing more rolls (or rolls back) until someone looks; the message and the audit
    log say what stopped it."""
    UpgradeCampaign.objects.filter(pk=campaign.pk).update(
        state=CampaignState.PAUSED, status_message=message
    )
    audit.record(actor=None, action=action, obj=campaign, after=after)
