from __future__ import annotations

from django.db import models

from tenants.choices import EndCause, EnvironmentState


class EnvironmentRule(models.Model):
    """Where a tenant's ephemeral environments go, like GitLab CI's `rules:`.

    Ordered by position, the first rule whose condition holds decides. The namespace is a
    template over the environment's variables ($PROJECT, $ENV_SLUG, ...) or a fixed name
    that every matching environment shares. A rule may also refuse (GitLab's `when: never`).
    Validated when saved (tenants.environment_rules).
    """

    tenant = models.ForeignKey("Tenant", on_delete=models.CASCADE, related_name="environment_rules")
    position = models.PositiveIntegerField(help_text="Lower positions are evaluated first.")
    condition = models.TextField(
        blank=True,
        help_text='A CEL expression over the variables, e.g. env_slug.startsWith("review"); '
        "empty matches every environment.",
    )
    namespace_template = models.CharField(
        max_length=200,
        blank=True,
        help_text="e.g. $TENANT-$PROJECT-$ENV_SLUG, or a fixed name shared by every match.",
    )
    refuse = models.BooleanField(
        default=False, help_text="Matching environments are refused (GitLab's when: never)."
    )
    message = models.CharField(
        max_length=300, blank=True, help_text="Shown when this rule refuses an environment."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tenant", "position", "id"]

    def __str__(self) -> str:
        return f"{self.tenant_id}: {self.position}. {self.condition or 'always'}"


class EphemeralEnvironment(models.Model):
    """A short-lived environment of a project (a review app), made by CI or a person.

    It lives in a namespace of its own (deleted when it ends) or in a shared one (which
    stays); either way its GitOps files go when it ends. It ends at `expires_at` unless an
    owner extends it (never past `max_expires_at`), or when CI stops it.
    """

    tenant = models.ForeignKey("Tenant", on_delete=models.PROTECT, related_name="+")
    project = models.ForeignKey(
        "Project", on_delete=models.PROTECT, related_name="ephemeral_environments"
    )
    slug = models.CharField(max_length=63, help_text="The CI environment slug, e.g. review-42.")
    branch = models.CharField(max_length=255, blank=True)
    merge_request = models.CharField(max_length=20, blank=True)
    namespace = models.ForeignKey(
        "Namespace", on_delete=models.PROTECT, related_name="ephemeral_environments"
    )
    owns_namespace = models.BooleanField(
        help_text="The namespace was made for this environment and goes with it."
    )
    rule_position = models.PositiveIntegerField(
        null=True, blank=True, help_text="The environment rule that named the namespace."
    )
    request = models.ForeignKey(
        "Request",
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The request that created this environment.",
    )
    state = models.CharField(
        max_length=10, choices=EnvironmentState.choices, default=EnvironmentState.STARTING
    )
    expires_at = models.DateTimeField(db_index=True)
    max_expires_at = models.DateTimeField(help_text="Extensions never go past this.")
    warned_at = models.DateTimeField(
        null=True, blank=True, help_text="When its owners were told it is about to expire."
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    end_cause = models.CharField(max_length=10, choices=EndCause.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "slug"],
                condition=~models.Q(state=EnvironmentState.ENDED),
                name="one_live_ephemeral_environment_per_slug",
            )
        ]
        ordering = ["expires_at", "id"]

    def __str__(self) -> str:
        return f"{self.project}/{self.slug}"
