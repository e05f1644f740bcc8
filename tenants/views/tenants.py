"""Pages of tenants: the home list, a tenant's page, onboarding; and a namespace's page."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from tenants import forms, provisioner, selectors, services, tasks
from tenants.client_address import client_ip
from tenants.errors import InvalidInput
from tenants.selectors import kubeconfig
from tenants.selectors.budget_alerts import budget_alerts_panel
from tenants.views.sleep import sleep_panel
from tenants.views.support import field_errors, require_platform_admin


@login_required
def home(request: HttpRequest) -> HttpResponse:
    tenants = selectors.tenants_for_user(request.user)
    roles = selectors.role_by_tenant(request.user)
    rows = [(tenant, roles.get(tenant.pk)) for tenant in tenants]
    return render(request, "tenants/home.html", {"rows": rows})


@login_required
def tenant_detail(request: HttpRequest, slug: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    return render(
        request,
        "tenants/tenant_detail.html",
        {
            "tenant": tenant,
            "budget": selectors.budget_summary(tenant),
            "using_most": selectors.namespaces_using_most(tenant),
            "namespaces": selectors.namespaces_visible_to(request.user).filter(tenant=tenant),
            "requests": selectors.requests_visible_to(request.user).filter(tenant=tenant)[:25],
            "permissions": provisioner.effective_permissions(tenant),
            "environments": selectors.live_environments(request.user, tenant),
            "budget_alerts": budget_alerts_panel(request.user, tenant),
            "cost_alert_form": forms.CostAlertForm(
                initial={"monthly_cost_alert": tenant.monthly_cost_alert}
            ),
            "now": timezone.now(),
        },
    )


@login_required
def tenant_repository_check(request: HttpRequest, slug: str) -> HttpResponse:
    """The repository check's answer, polled by the tenant's page while it is pending."""
    tenant = selectors.visible_tenant(request.user, slug)
    return render(request, "tenants/_repository_check.html", {"tenant": tenant})


@login_required
def namespace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    namespace = selectors.visible_namespace(request.user, pk)
    return render(
        request,
        "tenants/namespace_detail.html",
        {
            "namespace": namespace,
            "git_commits": selectors.commits_for_namespace(namespace),
            "environments": selectors.environments_in(namespace),
            "campaign_notices": selectors.campaign_notices(namespace),
            "definition": selectors.definition_of(namespace),
            "kubeconfig": kubeconfig.panel(
                request.user, namespace, credentials=request.GET.get("credentials", "")
            ),
            "deploy_tokens": selectors.deploy_tokens_panel(request.user, namespace),
            "deploy_token_form": forms.DeployTokenForm(),
            "sleep": sleep_panel(request.user, namespace),
        },
    )


@login_required
def namespace_kubeconfig(request: HttpRequest, pk: int) -> HttpResponse:
    """The "Use it" kubeconfig as a file to save, for those who see the namespace's page
    (404 for anyone else); where none can be made, back to the panel, which says why."""
    namespace = selectors.visible_namespace(request.user, pk)
    try:
        found = kubeconfig.use_it(
            request.user,
            namespace,
            credentials=kubeconfig.chosen_credentials(request.GET.get("credentials", "")),
        )
    except kubeconfig.KubeconfigUnavailable as refused:
        messages.error(request, str(refused))
        return redirect(reverse("namespace-detail", args=[pk]) + "#use-it")
    response = HttpResponse(found.text, content_type=kubeconfig.MEDIA_TYPE)
    response["Content-Disposition"] = found.disposition
    return response


@login_required
def tenant_onboard(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    form = forms.TenantOnboardingForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            tenant = services.onboard_tenant(
                actor=request.user, source_ip=client_ip(request), **form.service_arguments()
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        else:
            messages.success(request, f"Tenant {tenant.slug} is ready for requests.")
            for warning in form.repository_warnings:
                messages.warning(request, warning)
            tasks.request_repository_check(tenant)  # its answer shows on the tenant's page
            return redirect("tenant-detail", slug=tenant.slug)
    return render(request, "tenants/tenant_onboard.html", {"form": form})
