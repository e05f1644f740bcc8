from __future__ import annotations

from django.conf import settings
from django.db import models

from tenants.choices import ApproverRole, Decision, RequestKind, RequestState, RunState


class Request(models.Model):
    """What someone asked for. Its state changes only through tenants.services.lifecycle."""

    tenant = models.ForeignKey("Tenant", on_delete=models.PROTECT, related_name="requests")
    kind = models.CharField(max_length=20, choices=RequestKind.choices)
    payload = models.JSONField(help_text="Validated per kind by tenants.payloads.")
    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="requests"
    )
    state = models.CharField(
        max_length=20, choices=RequestState.choices, default=RequestState.SUBMITTED
    )
    status_message = models.TextField(
        blank=True, help_text="Why the request is in its state, in words a person can act on."
    )
    # What the approval policy decided at submission (tenants.policy).
    policy_rule = models.CharField(max_length=100, blank=True)
    approvals_required = models.PositiveSmallIntegerField(default=1)
    approver_role = models.CharField(
        max_length=20, choices=ApproverRole.choices, default=ApproverRole.PLATFORM_ADMIN
    )
    # The `request` variable the rules saw when they decided (tenants.policy.attributes_for),
    # so a proposed rule set can be replayed over past decisions (tenants.whatif). Empty on
    # requests decided before it was kept: their attributes are reconstructed.
    policy_attributes = models.JSONField(null=True, blank=True)
    # A worker holds the lease while it provisions, so two never work on one request; it
    # expires by itself if the worker dies, and the sweep hands the request to another.
    lease_owner = models.CharField(max_length=255, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The cluster or the repository did not answer: the request waits and is tried again
    # by itself (provisioning.reconcile.runs) until BERTH_OUTAGE_DEADLINE_SECONDS have passed.
    waiting_since = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    wait_reason = models.CharField(max_length=500, blank=True)
    # What it waits for (tenants.conditions.Reason): a guardrails install wakes only those
    # waiting for guardrails.
    waiting_for = models.CharField(max_length=40, blank=True)
    # Kubernetes-style conditions of its last reconcile (provisioning.reconcile.conditions):
    # [{"type", "status", "reason", "message", "lastTransitionTime", "retryAt"?}].
    conditions = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "created_at"], name="request_state_created")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_kind_display()} for {self.tenant_id}"


class Approval(models.Model):
    """A decision on a request, bound to the digest of the plan the approver saw."""

    request = models.ForeignKey(Request, on_delete=models.CASCADE, related_name="approvals")
    approver = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="approvals",
        null=True,
        blank=True,
        help_text="Empty when the policy approved automatically.",
    )
    decision = models.CharField(max_length=10, choices=Decision.choices)
    reason = models.TextField(blank=True)
    plan_digest = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        who = self.approver or "policy"
        return f"{self.get_decision_display()} by {who} on request #{self.request_id}"


class Comment(models.Model):
    request = models.ForeignKey(Request, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="comments"
    )
    body = models.TextField(max_length=4000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"comment by {self.author} on request #{self.request_id}"


class Run(models.Model):
    """One provisioning attempt of a request's plan."""

    request = models.ForeignKey(Request, on_delete=models.CASCADE, related_name="runs")
    plan_digest = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.RUNNING)
    # [{"kind", "namespace", "name", "outcome", "message"}], in apply order.
    steps = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} of request #{self.request_id} ({self.state})"
