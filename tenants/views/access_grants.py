"""Access on request, as pages: the grants a person may see, the form that asks for one,
one grant (its request, its end, revoking it, and the holder's kubeconfig while it lasts)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from tenants import quantities, selectors, services
from tenants.client_address import client_ip
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.forms.access import AccessRequestForm, live_namespace
from tenants.models import AccessGrant
from tenants.selectors import kubeconfig
from tenants.selectors.access_grants import STATES, filter_by_state
from tenants.views.support import field_errors

PAGE_SIZE = 50


@login_required
def grant_list(request: HttpRequest) -> HttpResponse:
    grants = selectors.grants_visible_to(request.user)
    state = request.GET.get("state", "")
    if state in STATES:
        grants = filter_by_state(grants, state)
    else:
        state = ""
    page = Paginator(grants.order_by("-created_at", "-id"), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    rows = [(grant, grant.state, lasting(grant)) for grant in page.object_list]
    return render(
        request,
        "tenants/access_grant_list.html",
        {"page": page, "rows": rows, "state": state, "states": STATES},
    )


def lasting(grant: AccessGrant) -> str:
    """How long it lasts as it was asked: 15m, 1h, 1h30m."""
    return quantities.seconds_to_duration(int(grant.duration.total_seconds()))


@login_required
def grant_new(request: HttpRequest) -> HttpResponse:
    asked = request.POST.get("namespace") or request.GET.get("namespace", "")
    target = live_namespace(asked.strip()[:63])
    form = AccessRequestForm(
        request.POST or None, target=target, initial={"namespace": asked.strip()[:63]}
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            grant = services.request_access(
                person=request.user,
                namespace=data["namespace"],
                role=data["role"],
                duration=data["duration"],
                reason=data["reason"],
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        except NotAllowed as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request,
                f"Asked for {grant.role} on {grant.namespace.name}: request "
                f"#{grant.request_id} waits for {grant.namespace.tenant.slug} to decide.",
            )
            return redirect("access-grant-detail", pk=grant.pk)
    if target is not None and form.errors.get("namespace"):
        # The namespace is fixed on this form: say what is wrong with it above the fields.
        for problem in form.errors.pop("namespace"):
            form.add_error(None, problem)
    return render(request, "tenants/access_grant_form.html", {"form": form, "target": target})


@login_required
def grant_detail(request: HttpRequest, pk: int) -> HttpResponse:
    grant = selectors.visible_grant(request.user, pk)
    state = grant.state
    holder = grant.person_id == request.user.pk
    return render(
        request,
        "tenants/access_grant_detail.html",
        {
            "grant": grant,
            "state": state,
            "lasting": lasting(grant),
            "may_revoke": state in ("granting", "active")
            and services.may_revoke(request.user, grant),
            "kubeconfig": kubeconfig.panel(
                request.user, grant.namespace, credentials=request.GET.get("credentials", "")
            )
            if holder and state == "active"
            else None,
        },
    )


@login_required
@require_POST
def grant_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    grant = selectors.visible_grant(request.user, pk)
    try:
        services.revoke_grant(grant_id=grant.pk, actor=request.user, source_ip=client_ip(request))
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Revoked: {grant.person.username}'s {grant.role} on {grant.namespace.name} ends "
            "now; the cluster's binding goes with the next reconcile of the namespace.",
        )
    return redirect("access-grant-detail", pk=grant.pk)


@login_required
def grant_kubeconfig(request: HttpRequest, pk: int) -> HttpResponse:
    """The holder's kubeconfig for the grant's namespace, while the grant is active; each
    download is in the audit log (access.kubeconfig_downloaded)."""
    grant = selectors.visible_grant(request.user, pk)
    if grant.person_id != request.user.pk or grant.state != "active":
        raise Http404("Only the person holding an active grant downloads its kubeconfig.")
    try:
        found = kubeconfig.use_it(
            request.user,
            grant.namespace,
            credentials=kubeconfig.chosen_credentials(request.GET.get("credentials", "")),
        )
    except kubeconfig.KubeconfigUnavailable as refused:
        messages.error(request, str(refused))
        return redirect(reverse("access-grant-detail", args=[grant.pk]) + "#use-it")
    services.record_grant_kubeconfig(
        grant=grant, actor=request.user, credentials=found.credentials, source_ip=client_ip(request)
    )
    response = HttpResponse(found.text, content_type=kubeconfig.MEDIA_TYPE)
    response["Content-Disposition"] = found.disposition
    return response
