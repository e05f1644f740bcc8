"""Start provisioning when the domain says a request is ready for a worker."""

from __future__ import annotations

from django.dispatch import receiver

from tenants.models import Cluster, Request, UpgradeCampaign
from tenants.signals import campaign_moved, cluster_registered, request_state_changed
from tenants.tasks import enqueue

# A worker's own transitions (start, ready, failed) need no new job.
ENQUEUE_AFTER = {"approve", "retry"}


@receiver(request_state_changed, sender=Request)
def enqueue_for_provisioning(sender, *, request_id: int, action: str, **_: object) -> None:  # noqa: ANN001
    if action in ENQUEUE_AFTER:
        from provisioning.tasks import converge

        enqueue(converge, request_id)  # if the broker is down, the sweep finds it later


@receiver(cluster_registered, sender=Cluster)
def discover_namespaces(sender, *, cluster_id: int, **_: object) -> None:  # noqa: ANN001
    from provisioning.tasks import discover_namespaces

    enqueue(discover_namespaces, cluster_id)


@receiver(campaign_moved, sender=UpgradeCampaign)
def roll_campaign(sender, *, campaign_id: int, action: str, **_: object) -> None:  # noqa: ANN001
    from provisioning.tasks import roll_back_campaign, roll_campaign

    enqueue(roll_back_campaign if action == "roll_back" else roll_campaign, campaign_id)
