"""The access map's pages: search, one group, one person, one namespace."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants import selectors


@login_required
def access_index(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")[:200]
    return render(
        request,
        "tenants/access_index.html",
        {
            "results": selectors.search(request.user, query),
            "groups": selectors.known_groups(request.user),
        },
    )


@login_required
def access_group(request: HttpRequest, group: str) -> HttpResponse:
    return render(
        request,
        "tenants/access_group.html",
        {
            "map": selectors.group_map(request.user, group),
            "platform_admin_rights": selectors.PLATFORM_ADMIN_RIGHTS,
        },
    )


@login_required
def access_person(request: HttpRequest, username: str) -> HttpResponse:
    return render(
        request,
        "tenants/access_person.html",
        {
            "map": selectors.person_map(request.user, username),
        },
    )


@login_required
def access_namespace(request: HttpRequest, name: str) -> HttpResponse:
    return render(
        request,
        "tenants/access_namespace.html",
        {
            "maps": selectors.namespace_maps(request.user, name),
        },
    )
