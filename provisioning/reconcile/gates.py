"""Every check a change of a cluster passes, in one place, for every reconcile that makes
one (a request's run, a campaign's wave, a repair, a deploy token): the cluster's
guardrails verified by content, and the merge gate of a key whose repository change is
still under review."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from provisioning.kube import ClusterClient
from provisioning.reconcile.guardrails import guardrails_problem
from tenants.choices import RequestKind, RequestState, TargetState
from tenants.conditions import Outcome, Reason, waiting
from tenants.models import CampaignTarget, Cluster, Namespace, Request


def cluster_gate(cluster: Cluster, client: ClusterClient | None = None) -> Outcome | None:
    """Waiting, with the reason, while the cluster's guardrails are missing, outdated or
    weakened; None when a tenant's objects may go there."""
    problem = guardrails_problem(cluster, client)
    if not problem:
        return None
    retry_at = timezone.now() + timedelta(seconds=settings.BERTH_GUARDRAILS_CHECK_SECONDS)
    return waiting(Reason.GUARDRAILS, problem, retry_at)


def merge_gate(namespace: Namespace) -> Outcome | None:
    """Waiting while a change of the namespace's desired state is under review: its pin
    moved by a campaign whose repository change awaits a merge, or a tenant_sync of its
    tenant on its cluster awaiting one. The cluster moves after the merge, with the
    repository, never before."""
    target = (
        CampaignTarget.objects.filter(namespace=namespace, state=TargetState.AWAITING_MERGE)
        .select_related("campaign")
        .first()
    )
    sync = (
        Request.objects.filter(
            tenant_id=namespace.tenant_id,
            kind=RequestKind.TENANT_SYNC,
            state=RequestState.AWAITING_MERGE,
            payload__cluster=namespace.cluster.name,
        )
        .order_by("pk")
        .first()
    )
    if target is None and sync is None:
        return None
    because = f"request #{sync.pk}" if sync else f"campaign #{target.campaign_id}"
    return waiting(
        Reason.AWAITING_MERGE,
        f"{namespace.name} changes after the merge of {because}'s pull request",
    )
