from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants import selectors


@login_required
def home(request: HttpRequest) -> HttpResponse:
    tenants = selectors.tenants_for_user(request.user)
    roles = selectors.role_by_tenant(request.user)
    rows = [(tenant, roles.get(tenant.pk)) for tenant in tenants]
    return render(request, "tenants/home.html", {"rows": rows})
