"""A tenant's budget alerts: the month's alerts and its monthly cost alert, a card of the
tenant's page; set by its owners and platform admins here."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from tenants import forms, selectors, services
from tenants.client_address import client_ip
from tenants.errors import InvalidInput, NotAllowed
from tenants.selectors.budget_alerts import budget_alerts_panel, may_set_cost_alert
from tenants.views.support import field_errors


@login_required
def budget_alerts_page(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the card on a page of its own. POST: set the monthly cost alert, back to the
    tenant's page when saved, here with the field's error when not."""
    tenant = selectors.visible_tenant(request.user, slug)
    form = forms.CostAlertForm(
        request.POST or None,
        initial={"monthly_cost_alert": tenant.monthly_cost_alert or ""},
    )
    if request.method == "POST":
        if not may_set_cost_alert(request.user, tenant):
            raise PermissionDenied(
                f"Only owners of {tenant.slug} and platform admins may set its monthly cost alert."
            )
        if form.is_valid():
            try:
                services.set_cost_alert(
                    actor=request.user,
                    tenant=tenant,
                    amount=form.cleaned_data["monthly_cost_alert"],
                    source_ip=client_ip(request),
                )
            except NotAllowed as exc:
                raise PermissionDenied(str(exc)) from exc
            except InvalidInput as exc:
                field_errors(form, exc)
            else:
                threshold = tenant.monthly_cost_alert
                messages.success(
                    request,
                    f"The monthly cost alert of {tenant.slug} is {threshold:,.2f} now."
                    if threshold is not None
                    else f"{tenant.slug} has no monthly cost alert now.",
                )
                return redirect(reverse("tenant-detail", args=[tenant.slug]) + "#budget-alerts")
    return render(
        request,
        "tenants/budget_alerts.html",
        {
            "tenant": tenant,
            "budget_alerts": budget_alerts_panel(request.user, tenant),
            "form": form,
        },
    )
