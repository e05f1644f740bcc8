"""Requests: what is asked, the plan, approvals, comments, history and runs."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from tenants.api.serializers.fields import MAX_TEXT, ChoiceLabel
from tenants.choices import PullRequestState, RequestKind, RequestState
from tenants.conditions import TYPES
from tenants.models import Approval, AuditEvent, Comment, PullRequest, Request, Run
from tenants.selectors import LISTED_COLUMNS

_STATE_LABEL = ChoiceLabel(RequestState.choices)


def _moment(value: datetime | None, zone: tzinfo) -> str | None:
    """DRF's DateTimeField output (ISO 8601 in the current time zone, UTC as Z) for an
    aware datetime, with the zone looked up once per row rather than once per field."""
    if value is None:
        return None
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class ConditionSerializer(serializers.Serializer):
    """A Kubernetes-style condition of the last reconcile (tenants.conditions)."""

    type = serializers.ChoiceField(choices=list(TYPES))
    status = serializers.ChoiceField(choices=["True", "False", "Unknown"])
    reason = serializers.CharField(help_text="Why, in one CamelCase word (e.g. AwaitingMerge).")
    message = serializers.CharField(allow_blank=True)
    lastTransitionTime = serializers.CharField(help_text="When its status last changed.")
    retryAt = serializers.CharField(
        required=False, help_text="Waiting: when Berth tries again by itself."
    )


class RequestSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    requester = serializers.SlugRelatedField(slug_field="username", read_only=True)
    state_label = ChoiceLabel(RequestState.choices, source="state")
    payload = serializers.JSONField(read_only=True)
    conditions = ConditionSerializer(many=True, read_only=True)

    class Meta:
        model = Request
        fields = [
            "id",
            "tenant",
            "kind",
            "state",
            "state_label",
            "status_message",
            "payload",
            "requester",
            "policy_rule",
            "approvals_required",
            "approver_role",
            "waiting_since",
            "next_try_at",
            "wait_reason",
            "conditions",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "waiting_since": {
                "help_text": "Set while the cluster or repository is "
                "unreachable: since when the request waits (null otherwise)."
            },
            "next_try_at": {"help_text": "When Berth tries again by itself."},
            "wait_reason": {"help_text": "What it waits for, in words that name no address."},
        }

    def to_representation(self, instance: Request | dict[str, Any]) -> dict:
        """What DRF's per-field walk would give (tests/tenants/api/test_queries.py compares them),
        built directly: a list page renders 50 of these, and the walk was a fifth of its
        time (docs/benchmarks.md). A list passes rows (selectors.request_rows_visible_to);
        one request passes its instance. The declared fields are not even bound
        (ModelSerializer builds them from the model)."""
        row = instance if isinstance(instance, dict) else _row_of(instance)
        zone = timezone.get_current_timezone()
        return {
            "id": row["id"],
            "tenant": row["tenant_slug"],
            "kind": row["kind"],
            "state": row["state"],
            "state_label": _STATE_LABEL.to_representation(row["state"]),
            "status_message": row["status_message"],
            "payload": row["payload"],
            "requester": row["requester_name"],
            "policy_rule": row["policy_rule"],
            "approvals_required": row["approvals_required"],
            "approver_role": row["approver_role"],
            "waiting_since": _moment(row["waiting_since"], zone),
            "next_try_at": _moment(row["next_try_at"], zone),
            "wait_reason": row["wait_reason"],
            "conditions": row["conditions"],
            "created_at": _moment(row["created_at"], zone),
            "updated_at": _moment(row["updated_at"], zone),
        }


def _row_of(tenancy_request: Request) -> dict[str, Any]:
    """One request as the list's row (selectors.request_rows_visible_to)."""
    return {
        **{column: getattr(tenancy_request, column) for column in LISTED_COLUMNS},
        "tenant_slug": tenancy_request.tenant.slug,
        "requester_name": tenancy_request.requester.username,
    }


class RequestCreateSerializer(serializers.Serializer):
    tenant = serializers.SlugField(max_length=50, help_text="The tenant's slug.")
    kind = serializers.ChoiceField(choices=RequestKind.choices)
    payload = serializers.DictField(
        help_text="Per kind, as on the web form. namespace: app, tier, cluster, cpu, memory, "
        "storage (quantities such as 500m, 2Gi); project: app, engine, cluster, tiers; "
        "environment: project, tier, cluster, cpu, memory, storage; quota_change: namespace, "
        "cpu, memory, storage; decommission: namespace, reason; sleep: namespace, mode (tier, "
        "custom, never) and for custom sleep_weekdays, sleep_at, wake_at, sleep_time_zone."
    )


class ApprovalSerializer(serializers.ModelSerializer):
    approver = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Null when the policy approved.",
    )

    class Meta:
        model = Approval
        fields = ["id", "approver", "decision", "reason", "plan_digest", "created_at"]


class CommentSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Comment
        fields = ["id", "author", "body", "created_at"]


class HistoryEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label")

    class Meta:
        model = AuditEvent
        fields = ["id", "action", "actor", "before", "after", "created_at"]


class PlanSerializer(serializers.Serializer):
    digest = serializers.CharField(
        help_text="Approvals name it (plan_digest): it covers the objects and the GitOps "
        "change (gitops_diff); if either moves, the digest does."
    )
    objects_digest = serializers.CharField(help_text="The objects' own digest.")
    objects = serializers.ListField(
        child=serializers.DictField(),
        help_text="The objects to apply, in order; Secrets' values redacted (each shown as "
        "<redacted> and the start of its SHA-256).",
    )
    deletes = serializers.ListField(child=serializers.DictField())
    yaml = serializers.CharField(help_text="The same plan as YAML documents.")
    gitops_diff = serializers.CharField(
        help_text="What approval would commit to the tenant's repository (a unified diff)."
    )
    gitops_error = serializers.CharField(
        help_text="Why the repository could not be read, if it could not."
    )


class RequestPermissionsSerializer(serializers.Serializer):
    may_decide = serializers.BooleanField()
    may_cancel = serializers.BooleanField()
    may_retry = serializers.BooleanField()


class PullRequestSerializer(serializers.ModelSerializer):
    state_label = ChoiceLabel(PullRequestState.choices, source="state")

    class Meta:
        model = PullRequest
        fields = [
            "repository",
            "number",
            "url",
            "branch",
            "base",
            "state",
            "state_label",
            "head_sha",
            "merged_by",
            "merge_sha",
            "closed_by",
            "reason",
            "rebase_problem",
            "opened_at",
            "updated_at",
        ]
        read_only_fields = fields


class RequestDetailSerializer(RequestSerializer):
    plan = PlanSerializer(
        allow_null=True,
        read_only=True,
        help_text="While the state still has a future plan, else null.",
    )
    plan_error = serializers.CharField(read_only=True)
    approvals = ApprovalSerializer(many=True, read_only=True)
    comments = CommentSerializer(many=True, read_only=True)
    history = HistoryEventSerializer(many=True, read_only=True)
    permissions = RequestPermissionsSerializer(
        read_only=True, help_text="What you may do with it now."
    )
    pull_request = PullRequestSerializer(
        allow_null=True,
        read_only=True,
        help_text="In merge-request mode, the pull request its change waits in (state "
        "awaiting_merge) or went through; null when it pushed directly.",
    )

    # Its own fields too: DRF's walk, not the list rows' shortcut.
    to_representation = serializers.ModelSerializer.to_representation

    class Meta(RequestSerializer.Meta):
        fields = [
            *RequestSerializer.Meta.fields,
            "plan",
            "plan_error",
            "approvals",
            "comments",
            "history",
            "permissions",
            "pull_request",
        ]
        read_only_fields = fields


class ApproveSerializer(serializers.Serializer):
    plan_digest = serializers.RegexField(
        r"^[0-9a-f]{64}\Z", help_text="The digest of the plan you approve (from the request)."
    )
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class RejectSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=2000, help_text="Why, in words the requester can act on."
    )


class CommentCreateSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=MAX_TEXT)


class RunSerializer(serializers.ModelSerializer):
    class Meta:
        model = Run
        fields = [
            "id",
            "request",
            "plan_digest",
            "state",
            "steps",
            "attempts",
            "error",
            "started_at",
            "finished_at",
        ]
