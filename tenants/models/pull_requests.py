"""Pull requests: a request's change waiting on the forge for a reviewer (merge-request
mode). Opened and rebased by the provisioner (provisioning.records.pull_requests); merged or
closed as the forge tells (tenants.services.pull_requests)."""

from __future__ import annotations

from django.db import models

from tenants.choices import PullRequestState


class PullRequest(models.Model):
    request = models.OneToOneField("Request", on_delete=models.CASCADE, related_name="pull_request")
    tenant = models.ForeignKey("Tenant", on_delete=models.CASCADE, related_name="pull_requests")
    repository = models.CharField(max_length=200, help_text="owner/name on the forge.")
    number = models.PositiveIntegerField()
    url = models.CharField(max_length=500, help_text="The pull request's web page.")
    branch = models.CharField(max_length=200)
    base = models.CharField(max_length=200)
    head_sha = models.CharField(max_length=64, blank=True)
    # The base branch's commit the head was rendered on: when the base moves past it, the
    # branch is rendered again on the new base (a rebase).
    base_sha = models.CharField(max_length=64, blank=True)
    state = models.CharField(
        max_length=10, choices=PullRequestState.choices, default=PullRequestState.OPEN
    )
    merged_by = models.CharField(max_length=200, blank=True)
    merge_sha = models.CharField(max_length=64, blank=True)
    closed_by = models.CharField(max_length=200, blank=True)
    # Why it ended, as the forge said it; or why Berth could not rebase its branch.
    reason = models.TextField(blank=True)
    rebase_problem = models.TextField(blank=True)
    opened_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Not unique: a forge that forgot its pull requests (a stand-in restarted) numbers
        # them again; the branch tells Berth's apart (`berth/request-<id>`).
        indexes = [
            models.Index(fields=["state"], name="pull_request_state"),
            models.Index(fields=["tenant", "repository", "number"], name="pull_request_number"),
        ]

    def __str__(self) -> str:
        return f"{self.repository}#{self.number} of request #{self.request_id}"
