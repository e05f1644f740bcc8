"""The form of the API tokens page (/tokens/): a name, scopes and an expiry."""

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
