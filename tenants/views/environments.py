"""Pages of ephemeral environments (extend, end) and a tenant's environment rules."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from tenants import environment_rules, forms, selectors, services
from tenants.choices import EndCause, EnvironmentState
from tenants.client_address import client_ip
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import EphemeralEnvironment
from tenants.views.support import field_errors


def environment_preview_of(tenant, data) -> dict:
    return selectors.environment_rules_preview(
        tenant,
        **{
            name: data.get(name, "")
            for name in ("project", "env_slug", "branch", "mr_id", "cluster")
        },
    )


@login_required
def environment_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The namespace the tenant's environment rules give an ephemeral environment, as typed
    (fetched by the request form's script, like name_preview)."""
    tenant = selectors.visible_tenant(request.user, slug)
    return render(
        request,
        "tenants/_environment_preview.html",
        {"env_preview": environment_preview_of(tenant, request.GET)},
    )


ENDABLE = (EnvironmentState.STARTING, EnvironmentState.LIVE)


def _environment_page(
    request: HttpRequest,
    environment: EphemeralEnvironment,
    *,
    extend_form: forms.ExtendEnvironmentForm | None = None,
    end_form: forms.EndEnvironmentForm | None = None,
) -> HttpResponse:
    user, running = request.user, environment.state in ENDABLE
    manages = selectors.may_manage_environment(user, environment)
    return render(
        request,
        "tenants/environment_detail.html",
        {
            "environment": environment,
            "end_request": selectors.end_request_of(environment),
            "history": selectors.environment_history(environment),
            "may_extend": running and manages,
            "may_end": running and selectors.may_end_environment(user, environment),
            "extend_form": extend_form or forms.ExtendEnvironmentForm(),
            "end_form": end_form or forms.EndEnvironmentForm(),
            "now": timezone.now(),
        },
    )


@login_required
def environment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _environment_page(request, selectors.visible_environment(request.user, pk))


@login_required
@require_POST
def environment_extend(request: HttpRequest, pk: int) -> HttpResponse:
    environment = selectors.visible_environment(request.user, pk)
    form = forms.ExtendEnvironmentForm(request.POST)
    if form.is_valid():
        try:
            extended = services.extend_environment(
                environment_id=environment.pk,
                actor=request.user,
                ttl_seconds=form.cleaned_data["ttl"],
                source_ip=client_ip(request),
            )
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from exc
        except InvalidInput as exc:
            field_errors(form, exc)
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request, f"{environment} now lives until {extended.expires_at:%Y-%m-%d %H:%M} UTC."
            )
            return redirect("environment-detail", pk=pk)
    # Shown again with what was typed and why it was refused.
    return _environment_page(request, environment, extend_form=form)


@login_required
@require_POST
def environment_end(request: HttpRequest, pk: int) -> HttpResponse:
    environment = selectors.visible_environment(request.user, pk)
    form = forms.EndEnvironmentForm(request.POST)
    if form.is_valid():
        try:
            ending = services.end_environment(
                environment_id=environment.pk,
                actor=request.user,
                cause=EndCause.ENDED_BY_USER,
                reason=form.cleaned_data["reason"],
                source_ip=client_ip(request),
            )
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from exc
        except InvalidInput as exc:
            for problem in exc.every_message():
                form.add_error(None, problem)
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            if ending is None:
                messages.success(
                    request,
                    f"{environment} ended before its request was decided: "
                    "nothing had been created.",
                )
            else:
                messages.success(
                    request, f"{environment} is ending: request #{ending.pk} removes what it made."
                )
            return redirect("environment-detail", pk=pk)
    return _environment_page(request, environment, end_form=form)


@login_required
def environment_rules_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The tenant's environment rules: read by everyone in it, edited as YAML by its owners
    and platform admins; a GET form tries them on an imagined environment."""
    tenant = selectors.visible_tenant(request.user, slug)
    may_edit = selectors.may_edit_environment_rules(request.user, tenant)
    rules = list(tenant.environment_rules.all())
    form = forms.EnvironmentRulesForm(
        request.POST or None, initial={"rules": forms.rules_to_yaml(rules)}
    )
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied(
                f"Only owners of {tenant.slug} and platform admins may "
                "change its environment rules."
            )
        if form.is_valid():
            try:
                saved = services.replace_environment_rules(
                    tenant=tenant,
                    rules=form.cleaned_data["rules"],
                    actor=request.user,
                    source_ip=client_ip(request),
                )
            except NotAllowed as exc:
                raise PermissionDenied(str(exc)) from exc
            except InvalidInput as exc:
                field_errors(form, exc)
            else:
                messages.success(
                    request,
                    f"{len(saved)} environment rule{'s' * (len(saved) != 1)}"
                    f" saved for {tenant.slug}.",
                )
                return redirect("environment-rules", slug=tenant.slug)
    try_form = forms.TryEnvironmentRulesForm(request.GET or None)
    return render(
        request,
        "tenants/environment_rules.html",
        {
            "tenant": tenant,
            "rules": rules,
            "may_edit": may_edit,
            "form": form,
            "try_form": try_form,
            "env_preview": selectors.environment_rules_preview(tenant, **try_form.variables())
            if try_form.is_bound
            else None,
            "default_template": environment_rules.DEFAULT_TEMPLATE,
            "semantics": environment_rules.__doc__,
        },
    )
