"""A tenant's monthly cost alert, set by its owners on the tenant's page."""

from __future__ import annotations

from django import forms

from tenants.forms.base import Form


class CostAlertForm(Form):
    """The amount as typed: tenants.services.set_cost_alert reads it and says what is wrong
    with it, for this form and the API alike."""

    monthly_cost_alert = forms.CharField(
        label="Monthly cost alert",
        required=False,
        max_length=40,
        help_text="In the currency of the tenant's costs, e.g. 500 or 1250.50; empty: no cost "
        "alert.",
        widget=forms.TextInput(attrs={"inputmode": "decimal", "size": 12}),
    )
