"""Access on request: one of a tier's roles for one person on one namespace, for a while.

A grant is asked as a request of kind `access` (decided like every request); approved, its
time starts, and the engine binds the person (the user name the cluster knows them by
through OpenID Connect) in that namespace alone until it ends: at `expires_at`, or earlier
when revoked. `ended_at` says when the binding was seen gone from the cluster.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tenants.choices import NamespaceState, RequestState
from tenants.models.namespaces import Namespace
from tenants.models.requests import Request


class AccessGrantQuerySet(models.QuerySet):
    def live(self, at=None) -> AccessGrantQuerySet:
        """Granted and not over: what the cluster should bind now."""
        return self.filter(
            request__state=RequestState.READY,
            revoked_at__isnull=True,
            ended_at__isnull=True,  # once its end is recorded, never live again
            expires_at__gt=at or timezone.now(),
            namespace__state=NamespaceState.ACTIVE,
        )

    def over(self, at=None) -> AccessGrantQuerySet:
        """Expired or revoked, whether or not its binding is gone yet."""
        now = at or timezone.now()
        return self.filter(models.Q(revoked_at__isnull=False) | models.Q(expires_at__lte=now))


class AccessGrant(models.Model):
    request = models.OneToOneField(Request, on_delete=models.CASCADE, related_name="access_grant")
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="access_grants")
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="access_grants"
    )
    role = models.CharField(max_length=40)
    cluster_role = models.CharField(max_length=100)
    # The user name kube-apiserver gives the person's ID token (prefix + `sub`).
    subject = models.CharField(max_length=300)
    duration = models.DurationField()
    reason = models.CharField(max_length=500)
    created_at = models.DateTimeField(default=timezone.now)
    # Set when the request is approved: the grant's time runs from then.
    starts_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="revoked_access_grants",
    )
    # When the engine removed its binding (or found it gone) after it ended.
    ended_at = models.DateTimeField(null=True, blank=True)

    objects = AccessGrantQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["ended_at", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.role} on {self.namespace.name} for {self.person.username}"

    @property
    def binding_name(self) -> str:
        return f"berth-access-{self.pk}"

    @property
    def state(self) -> str:
        """pending | granting | active | expired | revoked | refused | failed"""
        state = self.request.state
        if self.revoked_at is not None:
            return "revoked"
        if state == RequestState.SUBMITTED:
            return "pending"
        if state in (RequestState.REJECTED, RequestState.CANCELLED, RequestState.RETURNED):
            return "refused"
        if state == RequestState.FAILED:
            return "failed"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active" if state == RequestState.READY else "granting"
