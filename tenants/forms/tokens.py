"""The forms of tokens: an API token (/tokens/: a name, scopes and an expiry) and a
namespace's deploy token (how long it works, what it is for)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import forms
from django.utils import timezone

from tenants.forms.base import Form
from tenants.models.tokens import TokenScope

EXPIRY_CHOICES = [
    ("7", "in 7 days"),
    ("30", "in 30 days"),
    ("90", "in 90 days"),
    ("365", "in a year"),
    ("never", "never"),
]


class ApiTokenForm(Form):
    name = forms.CharField(
        max_length=100, help_text="What it is for, e.g. “CI pipeline of payments-shop”."
    )
    scopes = forms.MultipleChoiceField(
        choices=TokenScope.choices,
        initial=[TokenScope.READ],
        widget=forms.CheckboxSelectMultiple,
        help_text="A token never has more rights than you; scopes narrow it further.",
    )
    expires = forms.ChoiceField(label="Expires", choices=EXPIRY_CHOICES, initial="90")

    def expires_at(self) -> datetime | None:
        days = self.cleaned_data["expires"]
        return None if days == "never" else timezone.now() + timedelta(days=int(days))


class DeployTokenForm(Form):
    ttl_minutes = forms.TypedChoiceField(
        label="Works for",
        coerce=int,
        choices=[(m, f"{m} minutes") for m in (10, 15, 30, 45)] + [(60, "1 hour")],
        initial=30,
    )
    purpose = forms.CharField(
        max_length=200,
        required=False,
        help_text="What it is for, shown below: “shop PR 42 deploy”.",
    )
