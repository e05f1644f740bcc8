"""Upgrade campaigns, the provisioner's side: what the current definitions would change in every
namespace (read against the cluster, so a hand edit shows in the diff) and in its tenant's
repository (read against the branch), the rollout in waves that pauses on the first
failure, and the rollback to what each namespace held.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
from collections.abc import Callable
from typing import Any

import yaml
from django.conf import settings
from django.db.models import QuerySet

from provisioning import gitops, gitops_plan
from provisioning.inputs import namespace_input
from provisioning.kube import ClusterClient, cluster_client
from provisioning.plan import namespace_objects, ref_of, repo_root
from provisioning.reconcile import door
from provisioning.reconcile.keys import namespace_key
from provisioning.reconcile.proposals import gitops_remote, proposed_sync
from provisioning.reconcile.pull_requests import reviewed
from provisioning.reconcile.queue import Cause
from provisioning.records import campaign_progress
from tenants.choices import CampaignState, NamespaceState, TargetState
from tenants.conditions import Phase
from tenants.models import (
    CampaignCommit,
    CampaignTarget,
    Cluster,
    Namespace,
    Tenant,
    UpgradeCampaign,
)
from tenants.provisioner import CampaignChanges

logger = logging.getLogger(__name__)


def held(desired: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the cluster holds of the fields Berth sets on this object (None: absent)."""
    if live is None:
        return None
    meta = live.get("metadata") or {}
    wanted_labels = desired["metadata"].get("labels", {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k in wanted_labels}
    metadata = {key: meta[key] for key in ("name", "namespace") if meta.get(key)}
    if labels:
        metadata["labels"] = labels
    found = {"apiVersion": desired["apiVersion"], "kind": desired["kind"], "metadata": metadata}
    for key in desired:
        if key not in ("apiVersion", "kind", "metadata") and key in live:
            found[key] = live[key]
    return found


class _Plain(yaml.SafeDumper):
    # A plan may share one list between two places: spell it out twice, no &anchors.
    def ignore_aliases(self, data: Any) -> bool:
        return True


def yaml_lines(obj: dict[str, Any] | None) -> list[str]:
    if obj is None:
        return []
    return yaml.dump(obj, Dumper=_Plain, sort_keys=True, default_flow_style=False).splitlines(True)


def namespace_change(namespace: Namespace, client: ClusterClient) -> dict[str, Any] | None:
    """The namespace's objects as the current definitions render them, what the cluster
    holds of them and the YAML diff between; None when nothing would change."""
    inputs = namespace_input(namespace, current=True)
    desired = namespace_objects(inputs, inputs.namespaces[0])
    before, lines = [], []
    for obj in desired:
        ref = ref_of(obj)
        now = held(obj, client.get(ref))
        before.append({"ref": str(ref), "object": now})
        lines += difflib.unified_diff(
            yaml_lines(now), yaml_lines(obj), fromfile=f"a/{ref}", tofile=f"b/{ref}"
        )
    if not lines:
        return None
    diff = "".join(lines)
    shape = diff.replace(namespace.name, "<namespace>")
    return {
        "desired": desired,
        "before": before,
        "diff": diff,
        "group": hashlib.sha256(shape.encode()).hexdigest()[:16],
    }


def _in_scope(tier_id: int | None) -> QuerySet[Namespace]:
    namespaces = (
        Namespace.objects.filter(state=NamespaceState.ACTIVE, cluster__plan_only=False)
        .select_related("tenant", "tier", "cluster", "project")
        .order_by("name")
    )
    return namespaces if tier_id is None else namespaces.filter(tier_id=tier_id)


def campaign_changes(tier_id: int | None) -> CampaignChanges:
    """Every active namespace (of the tier) the current definitions would change, with its
    change, and every repository of their tenants whose files the current templates would
    change. Raises KubeError (a cluster) or GitError (a repository) when one cannot be
    read: a campaign is planned on all of it or not at all."""
    namespaces = list(_in_scope(tier_id))
    clients: dict[int, ClusterClient] = {}
    found = []
    for namespace in namespaces:
        client = clients.setdefault(namespace.cluster_id, cluster_client(namespace.cluster))
        change = namespace_change(namespace, client)
        if change is not None:
            found.append((namespace, change))
    return CampaignChanges(namespaces=found, repositories=repository_changes(namespaces))


def repository_changes(namespaces: list[Namespace]) -> list[tuple[Tenant, Cluster, dict]]:
    """Per tenant and cluster of these namespaces: what the commit of a tenant_sync would
    change in the tenant's repository (the files Berth manages, rendered by the current
    templates, against the branch as it is; a file the team took over is left alone)."""
    clusters: dict[Tenant, dict[str, Cluster]] = {}
    for namespace in namespaces:
        if namespace.tenant.gitops_repo_url.strip():
            clusters.setdefault(namespace.tenant, {})[namespace.cluster.name] = namespace.cluster
    found = []
    for tenant, on in sorted(clusters.items(), key=lambda pair: pair[0].slug):
        root = repo_root(tenant.gitops_path)
        _, branch = gitops.read_snapshot(
            gitops_remote(tenant), (f"{root}apps/", f"{root}clusters/")
        )
        for name in sorted(on):
            proposed = proposed_sync(tenant, on[name], branch)
            changed = gitops_plan.changes(proposed.current, proposed.files)
            if changed:
                found.append(
                    (
                        tenant,
                        on[name],
                        {
                            "diff": gitops_plan.diff_files(proposed.current, proposed.files),
                            "paths": sorted(changed),
                        },
                    )
                )
    return found


def roll(campaign_id: int, worker: str = "local") -> str:
    """Apply the campaign's pending namespaces wave by wave; pause at the first failure.
    Stops between namespaces when someone paused it meanwhile. One worker at a time: the
    one holding the campaign's lease (the sweep hands a lapsed one to another)."""
    return _leased(_roll, campaign_id, worker)


def _roll(campaign_id: int, worker: str, lease: float) -> str:
    """A driver of the key queue: each target's pin moved to the campaign's revision and its
    key reconciled (the door checks, applies and audits). Where the namespace's changes are
    reviewed, its key waits for the merge of the repository change instead, and the
    campaign with it."""
    campaign = UpgradeCampaign.objects.get(pk=campaign_id)
    while True:
        campaign.refresh_from_db(fields=["state"])
        if campaign.state != CampaignState.ROLLING:
            return campaign.state
        target = (
            CampaignTarget.objects.filter(
                campaign=campaign, state__in=(TargetState.PENDING, TargetState.FAILED)
            )
            .select_related("namespace__cluster", "namespace__tenant", "namespace__tier")
            .order_by("wave", "id")
            .first()
        )
        if target is None:
            return _file_commits(campaign)
        namespace = target.namespace
        if reviewed(namespace):
            campaign_progress.campaign_target_awaiting_merge(target_id=target.pk)
            continue
        campaign_progress.move_pin(target_id=target.pk)
        key = namespace_key(namespace.cluster.name, namespace.name)
        outcome = door.run([key], cause=Cause("campaign", campaign.pk), worker=worker)[key].outcome
        if outcome.phase is Phase.BUSY:  # a run holds the key: this wave goes on after it
            campaign_progress.move_pin(target_id=target.pk, back=True)
            return CampaignState.ROLLING
        if outcome.phase is not Phase.READY:
            logger.warning("campaign %s: %s: %s", campaign.pk, namespace.name, outcome)
            campaign_progress.campaign_target_failed(target_id=target.pk, error=outcome.message)
            return CampaignState.PAUSED
        campaign_progress.campaign_target_applied(target_id=target.pk)
        campaign_progress.renew_campaign_lease(campaign_id=campaign_id, owner=worker, seconds=lease)


def _file_commits(campaign: UpgradeCampaign) -> str:
    """The namespaces are done: each repository's files go out as a tenant_sync request."""
    for commit in CampaignCommit.objects.filter(
        campaign=campaign, state__in=(TargetState.PENDING, TargetState.FAILED)
    ).order_by("id"):
        if not campaign_progress.file_campaign_commit(
            commit_id=commit.pk, reviewed=_reviewed_on(commit, campaign.tier_id)
        ):
            return CampaignState.PAUSED
    if campaign_progress.outstanding(campaign_id=campaign.pk):
        return CampaignState.ROLLING  # done once each has run, or is returned (receivers)
    campaign_progress.finish_campaign(campaign_id=campaign.pk)
    return CampaignState.DONE


def _reviewed_on(commit: CampaignCommit, tier_id: int | None) -> bool:
    """Whether the commit's repository change goes through a pull request: where any of
    the namespaces it writes for is reviewed (or, with none left, its tenant is)."""
    reached = Namespace.objects.filter(
        tenant_id=commit.tenant_id, cluster_id=commit.cluster_id, state=NamespaceState.ACTIVE
    ).select_related("tenant", "tier")
    if tier_id:
        reached = reached.filter(tier_id=tier_id)
    found = list(reached)
    if not found:
        return bool(commit.tenant.changes_by_pull_request and commit.tenant.gitops_repo_url)
    return any(reviewed(namespace) for namespace in found)


def roll_back(campaign_id: int, worker: str = "local") -> str:
    """Put every namespace the campaign reached back to what it held before: the fields
    Berth set as they were, objects the campaign added deleted."""
    return _leased(_roll_back, campaign_id, worker)


def _leased(work: Callable[[int, str, float], str], campaign_id: int, worker: str) -> str:
    """Run `work` while this worker holds the campaign's lease; another's: nothing to do."""
    lease = settings.PROVISIONING_LEASE_SECONDS
    if not campaign_progress.acquire_campaign_lease(
        campaign_id=campaign_id, owner=worker, seconds=lease
    ):
        return "held by another worker"
    try:
        return work(campaign_id, worker, lease)
    finally:
        campaign_progress.release_campaign_lease(campaign_id=campaign_id, owner=worker)


def _roll_back(campaign_id: int, worker: str, lease: float) -> str:
    """Each namespace the campaign reached gets its pins back, and its key reconciled with
    cause "rollback": the fields Berth sets as the old definitions say, what the campaign
    added (labelled as the tenant's, no longer planned) deleted."""
    campaign = UpgradeCampaign.objects.get(pk=campaign_id)
    if campaign.state != CampaignState.ROLLING_BACK:
        return campaign.state
    reached = (
        CampaignTarget.objects.filter(
            campaign=campaign,
            state__in=(TargetState.APPLIED, TargetState.FAILED, TargetState.AWAITING_MERGE),
        )
        .select_related("namespace__tenant", "namespace__cluster")
        .order_by("-wave", "-id")
    )
    for target in reached:
        campaign_progress.move_pin(target_id=target.pk, back=True)
        key = namespace_key(target.namespace.cluster.name, target.namespace.name)
        outcome = door.run([key], cause=Cause("rollback", campaign.pk), worker=worker)[key].outcome
        if outcome.phase is not Phase.READY:
            campaign_progress.campaign_rollback_failed(target_id=target.pk, error=str(outcome))
            return CampaignState.PAUSED
        campaign_progress.campaign_target_rolled_back(target_id=target.pk)
        campaign_progress.renew_campaign_lease(campaign_id=campaign_id, owner=worker, seconds=lease)
    campaign_progress.finish_rollback(campaign_id=campaign.pk)
    return CampaignState.ROLLED_BACK
