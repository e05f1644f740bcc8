"""The approval rule form: a CEL condition compiled before it is saved."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.choices import ApproverRole, PolicyOutcome
from tenants.forms.base import ModelForm
from tenants.models import ApprovalRule
from tenants.policy import PolicyError, compile_condition


class ApprovalRuleForm(ModelForm):
    class Meta:
        model = ApprovalRule
        fields = ["position", "name", "description", "condition", "outcome",
                  "approvals_required", "approver_role", "message", "enabled"]
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
        if (cleaned.get("outcome") == PolicyOutcome.REQUIRE
                and cleaned.get("approver_role") not in ApproverRole.values):
            self.add_error("approver_role", "Choose who must approve.")
        return cleaned
