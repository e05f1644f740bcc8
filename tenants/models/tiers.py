"""Environment tiers: the presets every namespace is made from."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from tenants.choices import NetworkPreset, PodSecurityLevel, Role, SleepChoice
from tenants.models.sleep import SleepScheduleFields
from tenants.naming import tier_slug_problem
from tenants.validators import validate_dns_label


class EnvironmentTier(SleepScheduleFields):
    """A preset for a kind of environment: how big, how isolated, who may write, who approves."""

    slug = models.CharField(max_length=20, unique=True, validators=[validate_dns_label])
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order in promotion.")

    default_cpu_millis = models.PositiveIntegerField(default=1000)
    default_memory_mib = models.PositiveIntegerField(default=2048)
    default_storage_gib = models.PositiveIntegerField(default=10)
    max_cpu_millis = models.PositiveIntegerField(default=4000)
    max_memory_mib = models.PositiveIntegerField(default=8192)
    max_storage_gib = models.PositiveIntegerField(default=50)

    # LimitRange defaults for containers that do not say what they need.
    container_default_cpu_millis = models.PositiveIntegerField(default=500)
    container_default_memory_mib = models.PositiveIntegerField(default=512)
    container_request_cpu_millis = models.PositiveIntegerField(default=100)
    container_request_memory_mib = models.PositiveIntegerField(default=128)

    network_preset = models.CharField(
        max_length=20, choices=NetworkPreset.choices, default=NetworkPreset.INGRESS
    )
    pod_security_level = models.CharField(
        max_length=20, choices=PodSecurityLevel.choices, default=PodSecurityLevel.RESTRICTED
    )
    # ClusterRoles bound to the tenant's groups in namespaces of this tier. The defaults are
    # the roles Berth ships (provisioning.guardrails; "Install guardrails" puts them on a
    # cluster): Kubernetes' edit/view without writes to quota, limits and RBAC. The
    # built-in edit, admin and cluster-admin are refused at provisioning: they let a team
    # undo its own guardrails.
    owner_cluster_role = models.CharField(max_length=100, default="berth-tenant-edit")
    member_cluster_role = models.CharField(max_length=100, default="berth-tenant-edit")
    viewer_cluster_role = models.CharField(max_length=100, default="berth-tenant-view")

    # Access on request (tenants.services.access): how long a person may hold one of this
    # tier's roles, and the elevated role the platform offers here beyond the three above.
    access_min_minutes = models.PositiveIntegerField("shortest access grant (minutes)", default=15)
    access_max_minutes = models.PositiveIntegerField("longest access grant (minutes)", default=480)
    elevated_role = models.CharField(
        max_length=40,
        blank=True,
        validators=[validate_dns_label],
        help_text="A role people may ask for on this tier's namespaces beyond owner, member "
        'and viewer, e.g. "prod-edit"; blank: none.',
    )
    elevated_cluster_role = models.CharField(
        max_length=100, blank=True, help_text="The ClusterRole the elevated role binds."
    )

    # Hibernation (docs/hibernation.md): the schedule above is the default of the tier's
    # namespaces; what their owners may change of it; how long "Wake now" lasts at most.
    sleep_owner_choice = models.CharField(
        "owners may",
        max_length=20,
        choices=SleepChoice.choices,
        default=SleepChoice.ANYTHING,
    )
    wake_max_hours = models.PositiveSmallIntegerField(
        "longest wake (hours)", default=12, help_text="How long a wake on demand lasts at most."
    )
    sleep_after_idle_hours = models.PositiveSmallIntegerField(
        "sleep after idle (hours)",
        null=True,
        blank=True,
        help_text="Instead of a schedule (review environments): a namespace sleeps once this "
        "long has passed without a deploy (a deploy token minted for it) and wakes at the next.",
    )

    is_ephemeral = models.BooleanField(default=False)
    default_ttl = models.DurationField(null=True, blank=True)
    max_ttl = models.DurationField(null=True, blank=True)
    auto_repair_drift = models.BooleanField(default=False)
    # Pipelines of the tenant may mint short-lived tokens for its namespaces of this tier
    # (tenants.services.deploy_tokens). Off unless a platform admin turns it on: prod keeps
    # its changes to the GitOps controller.
    deploy_tokens_allowed = models.BooleanField(
        default=False,
        help_text="Members may mint short-lived deploy tokens (at most an hour) for "
        "pipelines in namespaces of this tier.",
    )
    # Merge-request mode for this tier's namespaces: unset, each tenant's own setting holds.
    changes_by_pull_request = models.BooleanField(
        "changes reach the repository through a pull request",
        null=True,
        blank=True,
        help_text="Unset: each tenant's own setting. Yes: requests touching this tier's "
        "namespaces open a pull request (the tenant needs a forge); No: they push directly.",
    )

    class Meta:
        ordering = ["position", "slug"]
        verbose_name = "environment tier"

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        self.clean_schedule()
        if not 1 <= self.wake_max_hours <= 168:
            raise ValidationError({"wake_max_hours": "From 1 to 168 hours."})
        if self.sleep_after_idle_hours is not None:
            if not 1 <= self.sleep_after_idle_hours <= 720:
                raise ValidationError({"sleep_after_idle_hours": "From 1 to 720 hours."})
            if self.sleep_weekdays:
                problem = "A tier sleeps on a schedule or when idle, not both."
                raise ValidationError({"sleep_after_idle_hours": problem})
        problem = tier_slug_problem(self.slug)
        if problem:
            raise ValidationError({"slug": problem})
        if self.access_min_minutes > self.access_max_minutes:
            raise ValidationError(
                {"access_min_minutes": "The shortest grant is longer than the longest."}
            )
        if bool(self.elevated_role) != bool(self.elevated_cluster_role):
            raise ValidationError(
                {"elevated_cluster_role": "An elevated role needs its ClusterRole, and back."}
            )
        if self.elevated_role in Role.values:
            raise ValidationError({"elevated_role": "Name it apart from owner, member, viewer."})

    def access_roles(self) -> dict[str, str]:
        """The roles a person may ask for here, each with the ClusterRole it binds."""
        offered = {role: self.cluster_role_for(role) for role in Role.values}
        if self.elevated_role and self.elevated_cluster_role:
            offered[self.elevated_role] = self.elevated_cluster_role
        return offered

    def cluster_role_for(self, role: str) -> str:
        return {
            Role.OWNER: self.owner_cluster_role,
            Role.MEMBER: self.member_cluster_role,
            Role.VIEWER: self.viewer_cluster_role,
        }[role]
