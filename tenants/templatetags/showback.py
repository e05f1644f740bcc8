"""`{% tenant_costs tenant %}` and `{% costs_card %}`: the showback section of a tenant's
page and the dashboard's card, each a partial fed by tenants.selectors.costs, so the pages
that show them need one line each."""

from __future__ import annotations

from django import template
from django.utils import timezone

from tenants import usage
from tenants.models import Tenant
from tenants.selectors.charges import (
    month_start,
    months_pieces,
    next_month,
    parse_month,
    previous_month,
)
from tenants.selectors.cost_chart import cost_chart
from tenants.selectors.cost_totals import totals_by_tenant
from tenants.selectors.costs import rounded, tenant_costs
from tenants.selectors.usage_history import last_months, usage_history

register = template.Library()


@register.inclusion_tag("tenants/_tenant_costs.html")
def tenant_costs_section(tenant: Tenant, month: str | None = None) -> dict:
    """The section for `month` (YYYY-MM; this month when absent or not a month), and the
    last months' used against allocated, from one read of the months they show."""
    try:
        first = parse_month(month)
    except ValueError:
        first = None
    now = timezone.now()
    this_month = month_start(timezone.localdate(now))
    first = first or this_month
    history_months = last_months(now=now)
    read = dict(
        zip(
            [*history_months, first],
            months_pieces([*history_months, first], now, tenants=[tenant]),
            strict=True,
        )
    )
    costs = tenant_costs(tenant, month=first, now=now, read=read[first])
    measured = usage.measured_for([row.name for row in costs.namespaces if row.ended_at is None])
    return {
        "tenant": tenant,
        "costs": costs,
        "chart": cost_chart(costs),
        "measured": measured,
        "previous": previous_month(costs.month),
        "following": next_month(costs.month) if costs.month < this_month else None,
        "history": usage_history(tenant, now=now, read=[read[each] for each in history_months]),
    }


@register.inclusion_tag("tenants/_costs_card.html")
def costs_card(limit: int = 8) -> dict:
    found = totals_by_tenant(list(Tenant.objects.filter(retired_at__isnull=True)))
    return {
        "rows": [each for each in found if each.count][:limit],
        "unpriced": sorted({cluster for each in found for cluster in each.unpriced_clusters}),
    }


@register.filter
def money(amount: object) -> str:
    """An amount to the cent, grouped: 1,234.50."""
    return f"{rounded(amount):,.2f}" if amount is not None else "—"


@register.filter
def hours(amount: object) -> str:
    """Hours to the tenth, grouped: 1,234.5."""
    return f"{amount:,.1f}" if amount is not None else "—"


@register.filter
def get_usage(by_namespace: dict, name: str) -> dict | None:
    return (by_namespace or {}).get(name)
