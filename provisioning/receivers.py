"""Start provisioning when the domain says a request is ready for a worker."""

from __future__ import annotations

from django.dispatch import receiver

from tenants.models import (
    AccessGrant,
    Cluster,
    Namespace,
    Request,
    TruthTable,
    UpgradeCampaign,
)
from tenants.queue import enqueue
from tenants.signals import (
    access_grant_revoked,
    campaign_moved,
    cluster_registered,
    namespace_sleep_changed,
    request_state_changed,
)

# A worker's own transitions (start, ready, failed) need no new job; a merge on the forge
# lets a run waiting for it go on.
ENQUEUE_AFTER = {"approve", "retry", "resume_merged"}


@receiver(request_state_changed, sender=Request)
def enqueue_for_provisioning(
    sender,
    *,
    request_ids: list[int],
    action: str,
    **_: object,
) -> None:
    """A job per batch of requests a worker provisions together (provisioning.reconcile.batches)."""
    if action in ENQUEUE_AFTER:
        from provisioning.reconcile.batches import batches_of
        from provisioning.tasks import converge

        for leader, *companions in batches_of(request_ids):
            # If the broker is down, the sweep finds them later.
            enqueue(converge, leader, companions)


@receiver(request_state_changed, sender=Request)
def settle_campaigns(sender, *, request_ids: list[int], action: str, **_: object) -> None:
    """A campaign's tenant_sync ended (merged and run, closed, failed): its namespaces are
    settled, and the campaign, rolling while it waited for them, looks again."""
    if action in ("mark_ready", "return_unmerged", "mark_failed", "reject"):
        from provisioning.records.campaign_progress import settle_campaign_syncs
        from provisioning.tasks import roll_campaign

        for campaign_id in set(settle_campaign_syncs(request_ids=request_ids, action=action)):
            enqueue(roll_campaign, campaign_id)


@receiver(request_state_changed, sender=Request)
def retake_truth_tables(sender, *, request_ids: list[int], action: str, **_: object) -> None:
    """A request Ready: the truth tables of its tenant that someone has taken (an untaken one
    waits for beat) are retaken, so none shows its new files as orphans."""
    if action == "mark_ready":
        from provisioning.tasks import retake_truth_table

        tenants = TruthTable.objects.filter(tenant__requests__pk__in=request_ids)
        for tenant_id in set(tenants.values_list("tenant_id", flat=True)):
            enqueue(retake_truth_table, tenant_id)


@receiver(cluster_registered, sender=Cluster)
def discover_namespaces(sender, *, cluster_id: int, **_: object) -> None:
    from provisioning.tasks import discover_namespaces

    enqueue(discover_namespaces, cluster_id)


@receiver(campaign_moved, sender=UpgradeCampaign)
def roll_campaign(sender, *, campaign_id: int, action: str, **_: object) -> None:
    from provisioning.tasks import roll_back_campaign, roll_campaign

    enqueue(roll_back_campaign if action == "roll_back" else roll_campaign, campaign_id)


@receiver(request_state_changed, sender=Request)
def schedule_grant_ends(sender, *, request_ids: list[int], action: str, **_: object) -> None:
    """An access grant Ready: the queue holds its key until the moment it ends."""
    if action == "mark_ready":
        from provisioning.reconcile import door

        door.schedule_grant_ends(request_ids)


@receiver(access_grant_revoked, sender=AccessGrant)
def remove_revoked_grant(sender, *, grant_id: int, actor: str, **_: object) -> None:
    """A grant revoked: its namespace's key reconciled now, which removes its binding."""
    from provisioning.reconcile import door
    from provisioning.reconcile.keys import namespace_key
    from provisioning.reconcile.queue import Cause

    grant = AccessGrant.objects.select_related("namespace__cluster").get(pk=grant_id)
    key = namespace_key(grant.namespace.cluster.name, grant.namespace.name)
    door.enqueue([key], cause=Cause("grant", grant_id, actor, "revoked"))


@receiver(namespace_sleep_changed, sender=Namespace)
def settle_sleep(sender, *, namespace_id: int, actor: str, **_: object) -> None:
    """Woken on demand (or its schedule changed): its sleep settled now."""
    from provisioning.reconcile import door
    from provisioning.reconcile.queue import Cause

    namespace = Namespace.objects.select_related("tier", "cluster").get(pk=namespace_id)
    door.settle_sleep([namespace], cause=Cause("wake" if actor else "sleep", actor=actor))


@receiver(request_state_changed, sender=Request)
def follow_sleep_schedules(sender, *, request_ids: list[int], action: str, **_: object) -> None:
    """A namespace Ready (made, or its sleep schedule changed): its schedule followed from
    now (asleep at once when made during its sleeping hours)."""
    if action == "mark_ready":
        from provisioning.reconcile import door
        from provisioning.reconcile.queue import Cause
        from tenants.kinds import kinds_where

        changed = Request.objects.filter(
            pk__in=request_ids, kind__in=kinds_where(sets_sleep_schedule=True)
        ).exists()
        door.settle_sleep(
            door.namespaces_of_requests(request_ids), cause=Cause("sleep"), changed=changed
        )
