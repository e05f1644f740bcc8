"""Deploy tokens: short-lived Kubernetes credentials a tenant member mints for a pipeline.

Each mint is its own ServiceAccount in the namespace, bound to the tier's member role, and a
token the cluster issues for it (TokenRequest, at most an hour). Berth keeps the record, who
minted it, until when, and whether it was revoked, never the token: revoking, or the
token's expiry, removes the ServiceAccount and its binding, which ends every token of it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tenants.models.namespaces import Namespace


class DeployTokenQuerySet(models.QuerySet):
    def live(self) -> DeployTokenQuerySet:
        return self.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())

    def to_remove(self) -> DeployTokenQuerySet:
        """Expired or revoked whose ServiceAccount may still be on the cluster."""
        return self.filter(removed_at__isnull=True).filter(
            models.Q(expires_at__lte=timezone.now()) | models.Q(revoked_at__isnull=False)
        )


class DeployToken(models.Model):
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="deploy_tokens")
    minted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="deploy_tokens"
    )
    # The ServiceAccount the token is for (unique per mint), and what it was bound to.
    service_account = models.CharField(max_length=63, unique=True)
    cluster_role = models.CharField(max_length=100)
    audience = models.CharField(max_length=255)
    purpose = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="revoked_deploy_tokens",
    )
    # When its ServiceAccount and binding were removed from the cluster.
    removed_at = models.DateTimeField(null=True, blank=True)

    objects = DeployTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["removed_at", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.service_account} in {self.namespace.name}"

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "live"
