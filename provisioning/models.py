from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker proved it takes jobs off the broker."""

    hostname = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    class Meta:
        ordering = ["-seen_at"]

    def __str__(self) -> str:
        return f"{self.hostname} at {self.seen_at:%Y-%m-%d %H:%M:%S}"


class GitCommit(models.Model):
    """A commit Berth pushed to a tenant's GitOps repository for a request, and its diff."""

    request = models.ForeignKey(
        "tenants.Request", on_delete=models.CASCADE, related_name="git_commits"
    )
    # A project request writes several namespaces' files in its one commit.
    namespaces = models.ManyToManyField(
        "tenants.Namespace",
        blank=True,
        related_name="git_commits",
        help_text="The namespaces the request created, changed or removed.",
    )
    repo_url = models.CharField("repository URL", max_length=500, help_text="Never credentials.")
    branch = models.CharField(max_length=200)
    sha = models.CharField("commit", max_length=64)
    message = models.TextField(blank=True)
    diff = models.TextField(blank=True)
    files = models.JSONField(
        default=dict, blank=True, help_text="path → added | modified | deleted"
    )
    pushes = models.PositiveSmallIntegerField(
        default=1, help_text="Pushes tried, including ones refused because the branch moved."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.sha[:12]} on {self.branch} for request #{self.request_id}"


class AppliedObject(models.Model):
    """The resourceVersion an object had after Berth last applied it: the next apply that
    leaves it there changed nothing, without reading it first."""

    cluster = models.ForeignKey(
        "tenants.Cluster", on_delete=models.CASCADE, related_name="applied_objects"
    )
    api_version = models.CharField(max_length=200)
    object = models.CharField(max_length=600, help_text="Kind/namespace/name")
    resource_version = models.CharField(max_length=100)
    applied_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "api_version", "object"], name="applied_object_once_per_cluster"
            )
        ]

    def __str__(self) -> str:
        return f"{self.object} at {self.resource_version} on {self.cluster_id}"


class GitWrite(models.Model):
    """A request whose GitOps commit waits for its repository's writer. Whichever worker
    holds the repository's lock next commits every waiting request of that repository, one
    commit each, and pushes them together; it leaves each one's outcome here for the
    worker of that request, which takes it and deletes the row."""

    repository = models.CharField(
        max_length=100, db_index=True, help_text="The repository's lock name (never its URL)."
    )
    request = models.OneToOneField("tenants.Request", on_delete=models.CASCADE, related_name="+")
    queued_at = models.DateTimeField()
    outcome = models.CharField(
        max_length=20, blank=True, help_text="Blank while waiting; committed | unchanged."
    )
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["queued_at", "id"]

    def __str__(self) -> str:
        return f"request #{self.request_id}: {self.outcome or 'waiting'}"


class ClusterWatch(models.Model):
    """Who watches a cluster for drift (one watcher across all replicas) and how it fares:
    the lease (where there is no PostgreSQL advisory lock), the heartbeat /readyz reads and
    beat's reconcile trusts, and the figures /metrics shows."""

    cluster = models.OneToOneField(
        "tenants.Cluster", on_delete=models.CASCADE, related_name="watch"
    )
    holder = models.CharField(max_length=255, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Since the cluster was first watched, over every holder.
    events = models.BigIntegerField(default=0)
    relists = models.BigIntegerField(default=0)
    restarts = models.BigIntegerField(default=0)
    # Seconds from the API server's event to its comparison, the last one handled.
    lag_seconds = models.FloatField(default=0.0)

    def __str__(self) -> str:
        return f"watch of cluster {self.cluster_id} by {self.holder or 'nobody'}"


class QueuedKey(models.Model):
    """A key of desired state (a namespace or a tenant on a cluster, a tenant's repository)
    waiting for its reconcile, or being reconciled: one row per key, so a key queued twice
    is reconciled once, and the worker that claimed it is the only one working on it until
    `claimed_until` (provisioning.reconcile.queue)."""

    key = models.CharField(max_length=300, unique=True)
    # Why it was queued: "request 12", "campaign 3", "drift", "repair by alice", … (the
    # audit events of its reconcile name them).
    causes = models.JSONField(default=list)
    queued_at = models.DateTimeField()
    not_before = models.DateTimeField(db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    # Moves with every enqueue: a key queued again while a worker holds it is reconciled
    # again after, not dropped with the claim.
    generation = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=255, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["not_before", "id"]

    def __str__(self) -> str:
        return f"{self.key} ({self.claimed_by or 'queued'})"
