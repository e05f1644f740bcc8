"""`{% usage_history_section tenant %}`: used against allocated, month over month, in the
Costs section of a tenant's page, fed by tenants.selectors.usage_history."""

from __future__ import annotations

from django import template

from tenants import usage
from tenants.models import Tenant
from tenants.selectors.cost_chart import history_chart
from tenants.selectors.usage_history import UsageMonth, usage_history

register = template.Library()


@register.inclusion_tag("tenants/_usage_history.html")
def usage_history_section(tenant: Tenant, history: list[UsageMonth] | None = None) -> dict:
    """From `history` when the Costs section has read it already."""
    history = history if history is not None else usage_history(tenant)
    return {
        "tenant": tenant,
        "history": history,
        "chart": history_chart(history),
        "configured": bool(usage.endpoint()),
    }


@register.filter
def share(fraction: float) -> str:
    """0.964 → "96%" (a share of the hours measured)."""
    return f"{fraction:.0%}"
