from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker proved it takes jobs off the broker."""

    hostname = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    class Meta:
        ordering = ["-seen_at"]

    def __str__(self) -> str:
        return f"{self.hostname} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
