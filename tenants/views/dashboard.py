"""The platform admins' dashboard: the state of every request, and how the last 30 days went."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants import selectors
from tenants.selectors.dashboard import namespaces_asleep
from tenants.views.support import require_platform_admin


@login_required
def admin_dashboard(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    context = selectors.admin_dashboard()
    context["open_campaigns"] = list(
        selectors.campaigns().exclude(state__in=("done", "rolled_back", "rejected"))[:10]
    )
    context["unfenced"] = selectors.unfenced_clusters()
    context["sleeping"] = namespaces_asleep()
    return render(request, "tenants/dashboard.html", context)
