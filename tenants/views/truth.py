"""A tenant's truth table: database, repository and cluster, object by object; refresh and
(platform admins) repair."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from tenants import provisioner, selectors, services
from tenants.client_address import client_ip
from tenants.errors import DomainError


@login_required
def truth_table(request: HttpRequest, slug: str) -> HttpResponse:
    view = selectors.truth_table(
        request.user,
        slug,
        namespace=request.GET.get("namespace", "")[:63],
        project=request.GET.get("project", "")[:63],
    )
    return render(request, "tenants/truth_table.html", {"view": view})


def _back(slug: str, request: HttpRequest) -> HttpResponse:
    query = request.POST.get("filter", "")
    url = reverse("truth-table", args=[slug])
    return redirect(f"{url}?{query}" if query.startswith(("namespace=", "project=")) else url)


@login_required
@require_POST
def truth_refresh(request: HttpRequest, slug: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    wait = selectors.refresh_wait(tenant)
    if wait:
        messages.info(request, f"The table was taken moments ago; refresh again in {wait} s.")
        return _back(slug, request)
    table = provisioner.take_truth(tenant)
    off = sum(n for state, n in table["counts"].items() if state != "in_sync")
    messages.success(
        request,
        f"Compared {len(table['rows'])} objects: "
        f"{off or 'none'} disagree{'s' if off == 1 else ''}.",
    )
    for problem in table["problems"]:
        messages.warning(request, problem)
    return _back(slug, request)


@login_required
@require_POST
def truth_repair(request: HttpRequest, slug: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    try:
        made = services.repair_truth(
            tenant=tenant, actor=request.user, source_ip=client_ip(request)
        )
    except DomainError as exc:
        messages.error(request, str(exc))
        return _back(slug, request)
    if made:
        listed = ", ".join(
            f"#{r.pk} ({r.payload['cluster']}, {r.get_state_display().lower()})" for r in made
        )
        messages.success(request, f"Repair requested: {listed}. Refresh once it is ready.")
    else:
        messages.info(
            request, "A sync request is already open for every cluster; it repairs when it runs."
        )
    return _back(slug, request)
