"""Starting an upgrade campaign."""

from django import forms

from tenants.forms.base import Form
from tenants.models import EnvironmentTier


class CampaignForm(Form):
    tier = forms.ModelChoiceField(
        EnvironmentTier.objects.order_by("position"),
        required=False,
        empty_label="Every tier",
        help_text="The tier whose definition changed.",
    )
    reason = forms.CharField(
        max_length=300, help_text="What changed and why: tenants read it on their namespaces."
    )
    canary = forms.IntegerField(
        min_value=1, max_value=1000, initial=1, help_text="Namespaces in the first wave."
    )
    batch = forms.IntegerField(
        min_value=1, max_value=1000, initial=10, help_text="Namespaces per wave after it."
    )
