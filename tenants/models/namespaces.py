"""What tenants hold on the clusters: their projects, and the namespaces Berth made for them."""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models

from tenants.choices import GitOpsEngine, NamespaceState, SleepMode
from tenants.models.clusters import Cluster
from tenants.models.sleep import SleepScheduleFields
from tenants.models.tenancy import Tenant
from tenants.models.tiers import EnvironmentTier
from tenants.validators import validate_dns_label


class Project(models.Model):
    """A tenant's application, promoted through its environments."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="projects")
    name = models.CharField(max_length=63, validators=[validate_dns_label])
    gitops_engine = models.CharField(
        max_length=20, choices=GitOpsEngine.choices, default=GitOpsEngine.ARGOCD
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="unique_project_per_tenant")
        ]
        ordering = ["tenant__slug", "name"]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.name}"


class Namespace(SleepScheduleFields):
    """A namespace Berth provisioned (or is provisioning) on a cluster."""

    name = models.CharField(max_length=63, validators=[validate_dns_label])
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="namespaces")
    tier = models.ForeignKey(EnvironmentTier, on_delete=models.PROTECT, related_name="namespaces")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="namespaces")
    project = models.ForeignKey(
        Project, on_delete=models.PROTECT, null=True, blank=True, related_name="environments"
    )
    cpu_millis = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    memory_mib = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    storage_gib = models.PositiveIntegerField(default=0)
    labels = models.JSONField(default=dict, blank=True)
    state = models.CharField(
        max_length=20, choices=NamespaceState.choices, default=NamespaceState.PENDING
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    request = models.ForeignKey(
        "Request",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The request that created this namespace.",
    )
    # Reconcile's last finding: [{"object", "status": missing|changed|unexpected, "detail"}].
    drift = models.JSONField(default=list, blank=True)
    drift_checked_at = models.DateTimeField(null=True, blank=True)
    # Kubernetes-style conditions of its key's last reconcile (provisioning.reconcile).
    conditions = models.JSONField(default=list, blank=True)
    # The definitions its objects were last applied from (provisioning or a campaign); none:
    # made before Berth recorded them.
    tier_revision = models.ForeignKey(
        "TierRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    bundle_revision = models.ForeignKey(
        "BundleRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Hibernation (docs/hibernation.md): its schedule (the tier's, its own above, or none),
    # a wake on demand until when and by whom; `asleep` and `slept_at` are what the cluster
    # holds, written by the provisioner (provisioning.records.sleep).
    sleep_mode = models.CharField(max_length=10, choices=SleepMode.choices, default=SleepMode.TIER)
    awake_until = models.DateTimeField(null=True, blank=True)
    # The last deploy Berth knows of (a deploy token minted for it): idle sleep counts from it.
    last_deploy_at = models.DateTimeField(null=True, blank=True)
    asleep = models.BooleanField(default=False)
    slept_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"],
                condition=~models.Q(state=NamespaceState.DECOMMISSIONED),
                name="unique_live_namespace_per_cluster",
            )
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def idle_sleep_hours(self) -> int | None:
        """How long it may go without a deploy before it sleeps (its tier's idle sleep)."""
        if self.sleep_mode != SleepMode.TIER:
            return None
        return self.tier.sleep_after_idle_hours

    def sleeps(self) -> bool:
        return self.schedule() is not None or self.idle_sleep_hours() is not None

    def schedule(self):  # -> tenants.sleep_schedules.Schedule | None
        """The sleep schedule that holds for it now."""
        if self.sleep_mode == SleepMode.NEVER:
            return None
        if self.sleep_mode == SleepMode.CUSTOM:
            return self.own_schedule()
        return self.tier.own_schedule()
