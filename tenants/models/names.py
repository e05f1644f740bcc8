from __future__ import annotations

from django.db import models

from tenants.choices import NamePurpose
from tenants.validators import validate_dns_label


class NamespaceClaim(models.Model):
    """One owner and one purpose for every namespace name Berth creates or relies on, per
    cluster, recorded (tenants.services.names) in the same transaction as the request that
    computes the name and before anything exists in the cluster. A live claim (not
    released) holds its name: no other request, rule or tenant may use it."""

    cluster = models.ForeignKey("Cluster", on_delete=models.CASCADE, related_name="name_claims")
    name = models.CharField(max_length=63, validators=[validate_dns_label])
    purpose = models.CharField(max_length=20, choices=NamePurpose.choices)
    # The owner: none for the platform's and Berth's own namespaces.
    tenant = models.ForeignKey(
        "Tenant", on_delete=models.PROTECT, null=True, blank=True, related_name="name_claims"
    )
    app = models.CharField(
        max_length=63, blank=True, help_text="The project or application the name is for."
    )
    tier = models.CharField(max_length=20, blank=True)
    environment = models.CharField(
        max_length=63, blank=True, help_text="An ephemeral environment's slug."
    )
    namespace = models.ForeignKey(
        "Namespace",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="claims",
        help_text="The tenant namespace Berth provisions under this name, if it is one.",
    )
    request = models.ForeignKey(
        "Request",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="name_claims",
        help_text="The request that claimed the name.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    released_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"],
                condition=models.Q(released_at__isnull=True),
                name="one_live_claim_per_namespace_name",
            )
        ]
        ordering = ["cluster__name", "name", "-created_at"]

    def __str__(self) -> str:
        return f"{self.name} on {self.cluster_id}: {self.get_purpose_display()}"
