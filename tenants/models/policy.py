from __future__ import annotations

from django.db import models

from tenants.choices import ApproverRole, PolicyOutcome


class ApprovalRule(models.Model):
    """One ordered approval rule: a CEL condition over request attributes and an outcome.

    Rules are evaluated by position; the first whose condition holds decides.
    """

    position = models.PositiveIntegerField(help_text="Lower positions are evaluated first.")
    name = models.SlugField(max_length=100, unique=True)
    description = models.CharField(max_length=300, blank=True)
    condition = models.TextField(
        help_text='A CEL expression over `request`, e.g. request.tier == "prod"'
    )
    outcome = models.CharField(max_length=20, choices=PolicyOutcome.choices)
    approvals_required = models.PositiveSmallIntegerField(default=1)
    approver_role = models.CharField(
        max_length=20, choices=ApproverRole.choices, default=ApproverRole.PLATFORM_ADMIN
    )
    message = models.CharField(
        max_length=300, blank=True, help_text="Shown to the requester, e.g. why it is denied."
    )
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return f"{self.position}. {self.name}"
