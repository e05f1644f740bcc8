"""/api/v1/policy/what-if: a proposed approval rule set, and what it would change."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants import whatif
from tenants.api.serializers.fields import SlugReference
from tenants.choices import ApproverRole, PolicyOutcome, RequestKind
from tenants.models import Tenant


class ProposedRuleSerializer(serializers.Serializer):
    """One rule, as an approval rule has it; its place in `rules` is its position."""

    name = serializers.SlugField(max_length=100)
    description = serializers.CharField(
        max_length=300, required=False, allow_blank=True, default=""
    )
    condition = serializers.CharField(
        max_length=4000,
        trim_whitespace=False,
        help_text='A CEL expression over `request`, e.g. request.tier == "prod".',
    )
    outcome = serializers.ChoiceField(choices=PolicyOutcome.choices)
    approvals_required = serializers.IntegerField(min_value=1, max_value=10, default=1)
    approver_role = serializers.ChoiceField(
        choices=ApproverRole.choices, default=ApproverRole.PLATFORM_ADMIN
    )
    message = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    enabled = serializers.BooleanField(default=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problems = whatif.rule_problems(self.to_rule(attrs))
        if problems:
            raise serializers.ValidationError({key: [value] for key, value in problems.items()})
        return attrs

    @staticmethod
    def to_rule(attrs: dict[str, Any]) -> whatif.ProposedRule:
        return whatif.ProposedRule(
            name=attrs["name"],
            condition=attrs["condition"],
            outcome=attrs["outcome"],
            approvals_required=attrs.get("approvals_required", 1),
            approver_role=attrs.get("approver_role", ApproverRole.PLATFORM_ADMIN),
            message=attrs.get("message", ""),
            enabled=attrs.get("enabled", True),
        )


class WhatIfSerializer(serializers.Serializer):
    rules = ProposedRuleSerializer(
        many=True,
        max_length=whatif.MAX_RULES,
        help_text="The whole proposed rule set, in the order it would be evaluated "
        "(edited, added, removed or reordered against the rules in force).",
    )
    tenant = SlugReference(
        slug_field="slug",
        queryset=Tenant.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        help_text="Only this tenant's requests.",
    )
    kind = serializers.ChoiceField(
        choices=RequestKind.choices,
        required=False,
        allow_blank=True,
        default="",
        help_text="Only requests of this kind.",
    )
    since = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Only requests decided at or after this time.",
    )
    limit = serializers.IntegerField(
        min_value=1,
        max_value=whatif.REPLAY_LIMIT,
        default=whatif.REPLAY_LIMIT,
        help_text="How many of the last decided requests.",
    )

    def validate_rules(self, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = [rule["name"] for rule in rules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise serializers.ValidationError(
                f"Rule names are unique; named more than once: {', '.join(twice)}."
            )
        return rules


class OutcomeSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="The rule that decides (no-rule-matched: none).")
    outcome = serializers.ChoiceField(choices=PolicyOutcome.choices)
    approvals_required = serializers.IntegerField()
    approver_role = serializers.ChoiceField(choices=ApproverRole.choices)
    words = serializers.CharField(help_text='As people read it, e.g. "needs 1 × platform admin".')

    def to_representation(self, instance: whatif.Outcome) -> dict[str, Any]:
        return {
            "rule": instance.rule,
            "outcome": instance.outcome,
            "approvals_required": instance.approvals_required,
            "approver_role": instance.approver_role,
            "words": instance.words(),
        }


class ChangeSerializer(serializers.Serializer):
    request = serializers.IntegerField(allow_null=True, help_text="Null for a denial.")
    audit_event = serializers.IntegerField(allow_null=True, help_text="The denial's audit event.")
    tenant = serializers.CharField()
    kind = serializers.ChoiceField(choices=RequestKind.choices)
    decided_at = serializers.DateTimeField()
    change = serializers.ChoiceField(choices=list(whatif.CHANGE_LABELS.items()))
    change_label = serializers.CharField()
    before = OutcomeSerializer()
    after = OutcomeSerializer(allow_null=True, help_text="Null when a condition fails.")
    error = serializers.CharField(help_text="What failed, for change `error`.")
    attributes_reconstructed = serializers.BooleanField(
        help_text="Decided before Berth kept the attributes the rules saw: rebuilt from "
        "the payload and today's records."
    )

    def to_representation(self, instance: whatif.Change) -> dict[str, Any]:
        past = instance.past
        return {
            "request": past.request_id,
            "audit_event": past.event_id,
            "tenant": past.tenant,
            "kind": past.kind,
            "decided_at": serializers.DateTimeField().to_representation(past.decided_at),
            "change": instance.change,
            "change_label": instance.label,
            "before": OutcomeSerializer(past.decided).data,
            "after": OutcomeSerializer(instance.after).data if instance.after else None,
            "error": instance.error,
            "attributes_reconstructed": past.reconstructed,
        }


class WhatIfResultSerializer(serializers.Serializer):
    digest = serializers.CharField(
        help_text="Names the proposal: saving exactly these rules "
        "records this what-if in the audit event."
    )
    considered = serializers.IntegerField(help_text="Decided requests replayed.")
    reconstructed = serializers.IntegerField(
        help_text="Of them, with attributes rebuilt from the payload."
    )
    changed = serializers.IntegerField()
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Change kind → requests."
    )
    changes = ChangeSerializer(many=True)
