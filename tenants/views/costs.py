"""A tenant's costs (showback) as CSV: one row per namespace and day, with the hours it slept
and what sleeping saved that day (the page section is a partial of the tenant's page,
tenants.templatetags.showback); the platform's costs page."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse

from tenants import forms, selectors, services
from tenants.client_address import client_ip
from tenants.errors import InvalidInput
from tenants.selectors.charges import parse_month
from tenants.selectors.cost_overview import cost_overview
from tenants.selectors.costs import rounded, tenant_costs
from tenants.views.audit import _cell as defused
from tenants.views.support import field_errors, require_platform_admin

COLUMNS = [
    "day",
    "namespace",
    "cluster",
    "project",
    "tier",
    "cpu_cores",
    "memory_gib",
    "storage_gib",
    "currency",
    "cost",
    "asleep_hours",
    "savings",
]


@login_required
def tenant_costs_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """`?format=csv` (as the audit log's export); anything else is the tenant's page's
    Costs section."""
    tenant = selectors.visible_tenant(request.user, slug)
    if request.GET.get("format") != "csv":
        return redirect(reverse("tenant-detail", args=[tenant.slug]) + "#costs")
    try:
        month = parse_month(request.GET.get("month"))
    except ValueError:
        return HttpResponseBadRequest("month: give a month as YYYY-MM, e.g. 2026-11.")
    costs = tenant_costs(tenant, month=month)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for row in costs.namespaces:
        for day, amount in sorted(row.by_day.items()):
            slept, saved = row.asleep_by_day.get(day, (Decimal(0), Decimal(0)))
            writer.writerow(
                [
                    defused(value)
                    for value in (
                        day.isoformat(),
                        row.name,
                        row.cluster,
                        row.project,
                        row.tier,
                        f"{row.cpu_millis / 1000:g}",
                        f"{row.memory_mib / 1024:g}",
                        row.storage_gib,
                        row.currency,
                        rounded(amount),
                        rounded(slept),
                        rounded(saved),
                    )
                ]
            )
    response = HttpResponse(out.getvalue(), content_type="text/csv")
    response["Content-Disposition"] = (
        f'attachment; filename="berth-costs-{tenant.slug}-{costs.month:%Y-%m}.csv"'
    )
    return response


@login_required
def platform_costs(request: HttpRequest) -> HttpResponse:
    """What every tenant's namespaces cost in a month, per tenant, cluster and tier
    (platform admins); `?month=YYYY-MM`, this month by default. A POST adds an adjustment
    to the month (closed months only: the service says so)."""
    require_platform_admin(request)
    try:
        month = parse_month(request.GET.get("month"))
    except ValueError:
        return HttpResponseBadRequest("month: give a month as YYYY-MM, e.g. 2026-11.")
    overview = cost_overview(month)
    form = forms.AdjustmentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.add_adjustment(
                actor=request.user,
                tenant=form.cleaned_data["tenant"],
                month=overview.month,
                amount=form.cleaned_data["amount"],
                note=form.cleaned_data["note"],
                namespace=form.cleaned_data["namespace"],
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        else:
            messages.success(
                request,
                f"Adjustment of {form.cleaned_data['tenant'].slug}'s {overview.month:%B %Y} added.",
            )
            return redirect(f"{reverse('platform-costs')}?month={overview.month:%Y-%m}")
    return render(request, "tenants/costs.html", {"overview": overview, "form": form})
