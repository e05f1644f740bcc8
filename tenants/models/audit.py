from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise TypeError("Audit events are append-only.")

    def delete(self):
        raise TypeError("Audit events are append-only.")


class AuditEvent(models.Model):
    """Append-only record of who did what to which object, when and from where."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # Kept as text so the record still names the actor if the user is ever removed.
    actor_label = models.CharField(max_length=255)
    action = models.CharField(max_length=100, db_index=True)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=100)
    object_repr = models.CharField(max_length=255, blank=True)
    tenant = models.ForeignKey(
        "Tenant", on_delete=models.SET_NULL, null=True, blank=True, related_name="audit_events"
    )
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    source_ip = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        # A request's or an environment's history (its page, who made a move for the
        # e-mail): read by object, never by scanning the whole log.
        indexes = [
            models.Index(fields=["object_type", "object_id"], name="audit_object"),
            # A tenant's or a person's events, newest first, a page at a time: a tenant
            # with few events among a million is found by its own index, not by walking
            # the whole log from its newest end.
            models.Index(fields=["tenant", "-created_at", "-id"], name="audit_tenant_time"),
            models.Index(fields=["actor_label", "-created_at", "-id"], name="audit_actor_time"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.action} {self.object_type} {self.object_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise TypeError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Audit events are append-only.")
