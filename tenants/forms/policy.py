"""The approval rule form: a CEL condition compiled before it is saved."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django import forms
from django.utils import timezone

from tenants.choices import ApproverRole, PolicyOutcome, RequestKind
from tenants.forms.base import Form, ModelForm
from tenants.models import ApprovalRule, Tenant
from tenants.policy import PolicyError, compile_condition
from tenants.whatif import REPLAY_LIMIT


class ApprovalRuleForm(ModelForm):
    class Meta:
        model = ApprovalRule
        fields = [
            "position",
            "name",
            "description",
            "condition",
            "outcome",
            "approvals_required",
            "approver_role",
            "message",
            "enabled",
        ]
        widgets = {"condition": forms.Textarea(attrs={"rows": 3, "class": "code"})}

    def clean_condition(self) -> str:
        condition = self.cleaned_data["condition"]
        try:
            compile_condition(condition)
        except PolicyError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return condition

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("outcome") == PolicyOutcome.DENY and not cleaned.get("message"):
            self.add_error("message", "A deny rule needs a message telling people why.")
        if (
            cleaned.get("outcome") == PolicyOutcome.REQUIRE
            and cleaned.get("approver_role") not in ApproverRole.values
        ):
            self.add_error("approver_role", "Choose who must approve.")
        return cleaned


RULE_FORM_ID = "rule-form"


class WhatIfForm(Form):
    """Which past decisions a what-if replays (the "Try before saving" panel)."""

    prefix = "whatif"

    tenant = forms.ModelChoiceField(
        queryset=Tenant.objects.order_by("slug"),
        to_field_name="slug",
        required=False,
        empty_label="every tenant",
    )
    kind = forms.ChoiceField(choices=[("", "every kind"), *RequestKind.choices], required=False)
    since = forms.DateField(
        required=False,
        help_text="Decided on or after this day.",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    limit = forms.IntegerField(
        min_value=1,
        max_value=REPLAY_LIMIT,
        initial=REPLAY_LIMIT,
        required=False,
        label="Last",
        help_text=f"How many decided requests, at most {REPLAY_LIMIT}.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The panel sits below the rule's form, wider, and submits with it.
        for field in self.fields.values():
            field.widget.attrs["form"] = RULE_FORM_ID

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data
        since = data.get("since")
        return {
            "tenant": data.get("tenant"),
            "kind": data.get("kind") or "",
            "since": timezone.make_aware(datetime.combine(since, time.min)) if since else None,
            "limit": data.get("limit") or REPLAY_LIMIT,
        }
