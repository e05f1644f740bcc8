"""The namespace registry: every name Berth holds, per cluster, with its purpose and owner."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants.errors import InvalidInput
from tenants.filtersets import NamespaceClaimFilterSet
from tenants.selectors.names import (
    NameCursor,
    claims_visible_to_admin,
    names_page,
    prefix_overlaps,
)
from tenants.views.support import require_platform_admin

# Names a page: a screenful or two; the others are a link away, never a count away.
PAGE_SIZE = 100


@login_required
def name_registry(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    claims = NamespaceClaimFilterSet(
        request.GET or None, queryset=claims_visible_to_admin(), request=request
    )
    try:
        cursor = request.GET.get("cursor")
        page = names_page(
            claims.qs, cursor=NameCursor.decode(cursor) if cursor else None, size=PAGE_SIZE
        )
        status, problem = 200, ""
    except InvalidInput as error:
        page = names_page(claims.qs, size=PAGE_SIZE)
        status, problem = 400, error.field_errors["cursor"][0]
    context = {
        "filter": claims,
        "claims": page.claims,
        "problem": problem,
        "earlier": _page_link(request, page.previous) if page.previous else "",
        "later": _page_link(request, page.next) if page.next else "",
        "first": _page_link(request, None) if page.previous else "",
        "overlaps": prefix_overlaps(),
    }
    return render(request, "tenants/name_registry.html", context, status=status)


def _page_link(request: HttpRequest, cursor: NameCursor | None) -> str:
    """This page's address with its filters, at `cursor` (the first names without one)."""
    query = request.GET.copy()
    query.pop("cursor", None)
    if cursor is not None:
        query["cursor"] = cursor.encode()
    return f"?{query.urlencode()}" if query else "?"
