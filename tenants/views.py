from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from provisioning.engine import current_plan
from tenants import selectors, services
from tenants.choices import RequestState
from tenants.errors import DomainError, NotAllowed

# While a request is in one of these states its page keeps polling for progress.
MOVING_STATES = {RequestState.APPROVED, RequestState.PROVISIONING, RequestState.DECOMMISSIONING}
# States in which the plan still describes the future (afterwards, the run records the past).
PLANNED_STATES = {RequestState.SUBMITTED, RequestState.APPROVED, RequestState.FAILED,
                  RequestState.PROVISIONING}


def client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR")


@login_required
def home(request: HttpRequest) -> HttpResponse:
    tenants = selectors.tenants_for_user(request.user)
    roles = selectors.role_by_tenant(request.user)
    rows = [(tenant, roles.get(tenant.pk)) for tenant in tenants]
    return render(request, "tenants/home.html", {"rows": rows})


@login_required
def tenant_detail(request: HttpRequest, slug: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    return render(request, "tenants/tenant_detail.html", {
        "tenant": tenant,
        "namespaces": selectors.namespaces_visible_to(request.user).filter(tenant=tenant),
        "requests": selectors.requests_visible_to(request.user).filter(tenant=tenant)[:25],
    })


def _progress_context(tenancy_request) -> dict:  # noqa: ANN001 - Request
    return {
        "tenancy_request": tenancy_request,
        "run": tenancy_request.runs.first(),
        "polling": tenancy_request.state in MOVING_STATES,
    }


@login_required
def request_detail(request: HttpRequest, pk: int) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    plan, plan_error = None, ""
    if tenancy_request.state in PLANNED_STATES:
        try:
            plan = current_plan(tenancy_request)
        except ObjectDoesNotExist as exc:
            plan_error = f"The plan cannot be rendered: {exc}"
    return render(request, "tenants/request_detail.html", {
        **_progress_context(tenancy_request),
        "plan": plan,
        "plan_error": plan_error,
        "history": selectors.request_history(tenancy_request).select_related("actor"),
        "can_retry": (tenancy_request.state == RequestState.FAILED
                      and selectors.is_platform_admin(request.user)),
    })


@login_required
def request_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The per-object progress table alone, polled by the request page while it moves."""
    tenancy_request = selectors.visible_request(request.user, pk)
    return render(request, "tenants/_request_progress.html", _progress_context(tenancy_request))


@login_required
@require_POST
def request_retry(request: HttpRequest, pk: int) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    try:
        services.retry_request(
            request_id=tenancy_request.pk, actor=request.user,
            plan_digest=current_plan(tenancy_request).digest, source_ip=client_ip(request),
        )
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Request #{pk} is being provisioned again.")
    return redirect("request-detail", pk=pk)


@login_required
def namespace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    namespace = selectors.visible_namespace(request.user, pk)
    return render(request, "tenants/namespace_detail.html", {"namespace": namespace})
