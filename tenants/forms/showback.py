"""A correction of a closed month, added by a platform admin on the costs page."""

from __future__ import annotations

from django import forms

from tenants.forms.base import Form
from tenants.models import Tenant


class AdjustmentForm(Form):
    """What tenants.services.add_adjustment takes, as typed: the service says what is wrong
    with each field, for this form and the API alike."""

    tenant = forms.ModelChoiceField(
        queryset=Tenant.objects.order_by("slug"), to_field_name="slug", empty_label=None
    )
    amount = forms.CharField(
        max_length=40,
        help_text="Added to the month's total; negative for a credit, e.g. -12.50.",
        widget=forms.TextInput(attrs={"inputmode": "decimal", "size": 12}),
    )
    note = forms.CharField(
        max_length=500, help_text="Why: shown beside the adjustment, on the tenant's page too."
    )
    namespace = forms.CharField(
        max_length=63, required=False, help_text="The namespace it concerns, if one."
    )
