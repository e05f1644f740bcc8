"""Numbered revisions of what namespaces are rendered from: a tier's definition, and
Berth's own templates (the bundle). A namespace records the revisions it runs; a digest
that differs from the current one means an upgrade campaign has something to roll out
(provisioning.versions computes the digests)."""

from django.db import models


class TierRevision(models.Model):
    tier = models.ForeignKey("EnvironmentTier", on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    digest = models.CharField(max_length=64)
    definition = models.JSONField(help_text="The tier as plans saw it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tier", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["tier", "number"], name="one_tier_revision_number")
        ]

    def __str__(self) -> str:
        return f"{self.tier.slug} v{self.number}"


class BundleRevision(models.Model):
    number = models.PositiveIntegerField(unique=True)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"bundle v{self.number}"
