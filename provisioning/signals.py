"""Signals the provisioner sends so the project shell can observe it without being imported."""

from django.dispatch import Signal

# A push to a tenant's GitOps repository failed for good (after its retries): request_id.
git_push_failed = Signal()
