"""The namespace registry: every name Berth holds, per cluster, with its purpose and owner."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants.filtersets import NamespaceClaimFilterSet
from tenants.selectors.names import claims_visible_to_admin, prefix_overlaps
from tenants.views.support import require_platform_admin

PAGE_SIZE = 500


@login_required
def name_registry(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    claims = NamespaceClaimFilterSet(
        request.GET or None, queryset=claims_visible_to_admin(), request=request
    )
    return render(
        request,
        "tenants/name_registry.html",
        {
            "filter": claims,
            "claims": claims.qs[:PAGE_SIZE],
            "page_size": PAGE_SIZE,
            "overlaps": prefix_overlaps(),
        },
    )
