"""Celery tasks: thin orchestration over services; the database stays the source of truth."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from provisioning.models import WorkerHeartbeat


@shared_task(bind=True, name="provisioning.heartbeat")
def heartbeat(self) -> str:  # noqa: ANN001 - Celery task instance
    """Beat sends this every minute; a worker that runs it shows it is alive and consuming."""
    hostname = self.request.hostname or "unknown"
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
    return hostname
