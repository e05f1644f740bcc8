"""The namespace registry: every name Berth holds, per cluster, with its purpose and owner."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants.filtersets import NamespaceClaimFilterSet
from tenants.selectors.names import (
    NameCursor,
    claims_visible_to_admin,
    names_page,
    prefix_overlaps,
)
from tenants.views.support import page_at_cursor, page_link, require_platform_admin

# Names a page: a screenful or two; the others are a link away, never a count away.
PAGE_SIZE = 100


@login_required
def name_registry(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    claims = NamespaceClaimFilterSet(
        request.GET or None, queryset=claims_visible_to_admin(), request=request
    )
    page, status, problem = page_at_cursor(
        request,
        lambda cursor: names_page(claims.qs, cursor=cursor, size=PAGE_SIZE),
        NameCursor.decode,
    )
    context = {
        "filter": claims,
        "claims": page.claims,
        "problem": problem,
        "earlier": page_link(request, page.previous) if page.previous else "",
        "later": page_link(request, page.next) if page.next else "",
        "first": page_link(request, None) if page.previous else "",
        "overlaps": prefix_overlaps(),
    }
    return render(request, "tenants/name_registry.html", context, status=status)
