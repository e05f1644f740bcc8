"""Credentials and bookkeeping of the REST API (tenants.api).

`ApiToken`: a personal token someone made on the API tokens page (or with
`manage.py create_api_token`). Only the SHA-256 of the token is stored; the token itself is
shown once. It acts as its user, limited to its scopes.

`IdempotencyRecord`: what a POST sent with an `Idempotency-Key` header answered, so that
a retry with the same key and body gets the same answer instead of doing it twice.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

# Recognisable in logs, secret scanners and the Authorization header.
TOKEN_PREFIX = "berth_"  # noqa: S105 - a prefix, not a secret
# How much of a token is kept in clear, so people can tell their tokens apart.
DISPLAY_PREFIX_LENGTH = len(TOKEN_PREFIX) + 8


class TokenScope(models.TextChoices):
    READ = "read", "Read: everything the user may see"
    REQUEST = "request", "Request: submit, cancel and comment on requests"
    APPROVE = "approve", "Approve: approve, reject and retry requests"
    ADMIN = "admin", "Admin: onboard and change tenants and clusters (platform admins)"


def token_digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def of(self, user) -> ApiTokenQuerySet:
        return self.filter(user=user)


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'CI deploy'.")
    prefix = models.CharField(
        max_length=20, help_text="The first characters of the token, shown to tell them apart."
    )
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token.")
    scopes = models.JSONField(default=list)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Written at most once a minute per token (tenants.api.authentication).
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def status(self) -> str:
        if self.is_revoked:
            return "revoked"
        return "expired" if self.is_expired() else "active"


class IdempotencyRecord(models.Model):
    """One `Idempotency-Key` of one user: the request it came with and the answer it got."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # SHA-256 of the method, the path and the canonical JSON of the body.
    fingerprint = models.CharField(max_length=64)
    # Empty while the first request is still being answered.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # The answer's body as the JSON text that was sent (kept as text: it may hold escapes,
    # such as \u0000, that PostgreSQL's jsonb refuses).
    response_body = models.TextField(blank=True)
    response_headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="one_idempotency_key_per_user")
        ]

    def __str__(self) -> str:
        return f"idempotency key {self.key!r} of user {self.user_id}"
