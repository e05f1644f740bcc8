"""Upgrade campaigns: a changed tier (or bundle) rolled out to the namespaces it produces,
with the exact diff of each, in waves, under approval."""

from django.conf import settings
from django.db import models

from tenants.choices import CampaignState, TargetState
from tenants.models.clusters import Cluster
from tenants.models.namespaces import Namespace
from tenants.models.requests import Request
from tenants.models.tenancy import Tenant
from tenants.models.tiers import EnvironmentTier


class UpgradeCampaign(models.Model):
    tier = models.ForeignKey(
        EnvironmentTier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="campaigns",
        help_text="The tier whose namespaces it reaches; none: every tier.",
    )
    reason = models.CharField(max_length=300)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(
        max_length=20, choices=CampaignState.choices, default=CampaignState.AWAITING_APPROVAL
    )
    canary = models.PositiveSmallIntegerField(default=1, help_text="Namespaces in the first wave.")
    batch = models.PositiveSmallIntegerField(
        default=10, help_text="Namespaces per wave after the canary."
    )
    policy_rule = models.CharField(max_length=100, blank=True)
    approver_role = models.CharField(max_length=20, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    status_message = models.TextField(blank=True)
    # What it rolls out: the tier's revision (none for every tier: each target says) and
    # Berth's templates.
    tier_revision = models.ForeignKey(
        "TierRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    bundle_revision = models.ForeignKey(
        "BundleRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The worker rolling it (or rolling it back) holds this; the sweep hands a campaign whose
    # lease ran out to another worker.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"campaign #{self.pk} ({self.tier.slug if self.tier else 'every tier'})"


class CampaignTarget(models.Model):
    """One namespace of a campaign: what changes there and how far it got."""

    campaign = models.ForeignKey(UpgradeCampaign, on_delete=models.CASCADE, related_name="targets")
    namespace = models.ForeignKey(
        Namespace, on_delete=models.PROTECT, related_name="campaign_targets"
    )
    wave = models.PositiveIntegerField()
    group = models.CharField(
        max_length=16, help_text="Same value: the same diff, up to the namespace's name."
    )
    diff = models.TextField()
    desired = models.JSONField(default=list)  # the objects the new definition renders
    before = models.JSONField(default=list)  # [{"ref", "object" or None}] for a rollback
    state = models.CharField(
        max_length=20, choices=TargetState.choices, default=TargetState.PENDING
    )
    error = models.TextField(blank=True)
    # The revisions the namespace ran before and the tier revision it runs once applied.
    from_tier_revision = models.ForeignKey(
        "TierRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    from_bundle_revision = models.ForeignKey(
        "BundleRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    to_tier_revision = models.ForeignKey(
        "TierRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["wave", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "namespace"], name="one_target_per_namespace"
            )
        ]

    def __str__(self) -> str:
        return f"{self.namespace} in {self.campaign}"


class CampaignCommit(models.Model):
    """One tenant repository's files for one cluster: what a tenant_sync commit would change
    there under the current templates. Rolled out after the campaign's namespaces by filing
    that request, so the commit goes through the normal path (rules, writer, trailers)."""

    campaign = models.ForeignKey(UpgradeCampaign, on_delete=models.CASCADE, related_name="commits")
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="+")
    diff = models.TextField()
    paths = models.JSONField(default=list)  # the files it adds, changes or deletes
    state = models.CharField(
        max_length=20, choices=TargetState.choices, default=TargetState.PENDING
    )
    request = models.ForeignKey(
        Request, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "tenant", "cluster"],
                name="one_commit_per_repository_and_cluster",
            )
        ]

    def __str__(self) -> str:
        return f"{self.tenant} files on {self.cluster} in {self.campaign}"
