"""Upgrade campaigns as platform admins read them (grouped diffs, progress) and as tenants
see them on their namespaces (a notice)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from tenants.choices import CampaignState, TargetState
from tenants.models import (
    CampaignCommit,
    CampaignTarget,
    Namespace,
    UpgradeCampaign,
)


@dataclass
class DiffGroup:
    group: str
    diff: str  # the first namespace's; the others' differ only in the namespace's name
    namespaces: list[str]


def campaigns() -> QuerySet[UpgradeCampaign]:
    return (
        UpgradeCampaign.objects.select_related(
            "tier", "created_by", "decided_by", "tier_revision", "bundle_revision"
        )
        .annotate(
            namespaces=Count("targets"),
            applied=Count("targets", filter=Q(targets__state=TargetState.APPLIED)),
            failed=Count("targets", filter=Q(targets__state=TargetState.FAILED)),
        )
        .order_by("-created_at", "-id")
    )


def campaign(pk: int) -> UpgradeCampaign:
    return get_object_or_404(campaigns(), pk=pk)


def campaign_targets(found: UpgradeCampaign) -> list[CampaignTarget]:
    return list(
        found.targets.select_related(
            "namespace__tenant", "from_tier_revision", "to_tier_revision", "from_bundle_revision"
        )
        .order_by("wave", "id")
        .only(
            "id",
            "wave",
            "group",
            "state",
            "error",
            "applied_at",
            "namespace__name",
            "namespace__tenant__slug",
            "namespace__id",
            "from_tier_revision__number",
            "to_tier_revision__number",
            "from_bundle_revision__number",
        )
    )


def campaign_commits(found: UpgradeCampaign) -> list[CampaignCommit]:
    return list(found.commits.select_related("tenant", "cluster", "request").order_by("id"))


def diff_groups(found: UpgradeCampaign) -> list[DiffGroup]:
    """Namespaces grouped by identical diff, the largest group first."""
    groups: dict[str, DiffGroup] = {}
    for group, diff, name in found.targets.order_by("wave", "id").values_list(
        "group", "diff", "namespace__name"
    ):
        if group not in groups:
            groups[group] = DiffGroup(group=group, diff=diff, namespaces=[])
        groups[group].namespaces.append(name)
    return sorted(groups.values(), key=lambda g: (-len(g.namespaces), g.namespaces[0]))


def campaign_notices(namespace: Namespace) -> list[CampaignTarget]:
    """What upgrade campaigns mean for this namespace: pending, applied, rolled back."""
    return list(
        namespace.campaign_targets.exclude(campaign__state=CampaignState.REJECTED)
        .select_related("campaign")
        .order_by("-campaign__created_at")[:5]
    )
