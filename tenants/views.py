import csv

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from rest_framework.exceptions import ValidationError

from tenants import engine, environment_rules, forms, selectors, services
from tenants.choices import EndCause, EnvironmentState, RequestKind, RequestState
from tenants.errors import DomainError, NotAllowed, PlanUnavailable, PreviewUnavailable
from tenants.filtersets import AuditEventFilterSet, RequestFilterSet
from tenants.models import ApprovalRule, EphemeralEnvironment

# While a request is in one of these states its page keeps polling, so a decision or
# progress shows up without a reload.
MOVING_STATES = {RequestState.SUBMITTED, RequestState.APPROVED, RequestState.PROVISIONING,
                 RequestState.DECOMMISSIONING}


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
        "budget": selectors.budget_summary(tenant),
        "namespaces": selectors.namespaces_visible_to(request.user).filter(tenant=tenant),
        "requests": selectors.requests_visible_to(request.user).filter(tenant=tenant)[:25],
        "permissions": engine.effective_permissions(tenant),
        "environments": selectors.live_environments(request.user, tenant),
        "now": timezone.now(),
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
    plan, plan_error, gitops_diff, gitops_error = None, "", "", ""
    if tenancy_request.state in engine.PLANNED_STATES:
        try:
            plan = engine.plan(tenancy_request)
        except PlanUnavailable as exc:
            plan_error = str(exc)
        else:
            try:
                gitops_diff = engine.gitops_preview(tenancy_request)
            except PreviewUnavailable as exc:
                gitops_error = str(exc)
    may_decide = (tenancy_request.state == RequestState.SUBMITTED
                  and selectors.why_cannot_decide(request.user, tenancy_request) is None)
    return render(request, "tenants/request_detail.html", {
        **_progress_context(tenancy_request),
        "plan": plan,
        "plan_error": plan_error,
        "gitops_diff": gitops_diff,
        "gitops_error": gitops_error,
        "history": selectors.request_history(tenancy_request).select_related("actor"),
        "approvals": tenancy_request.approvals.select_related("approver"),
        "comments": tenancy_request.comments.select_related("author"),
        "comment_form": forms.CommentForm(),
        "may_decide": may_decide,
        "approve_form": forms.ApproveForm(initial={"plan_digest": plan.digest if plan else ""}),
        "reject_form": forms.RejectForm(),
        "may_cancel": (tenancy_request.state == RequestState.SUBMITTED
                       and (tenancy_request.requester_id == request.user.pk
                            or selectors.is_platform_admin(request.user))),
        "can_retry": (tenancy_request.state == RequestState.FAILED
                      and selectors.is_platform_admin(request.user)),
        "environment": selectors.environment_of_request(tenancy_request),
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
            plan_digest=engine.plan(tenancy_request).digest, source_ip=client_ip(request),
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
    return render(request, "tenants/namespace_detail.html", {
        "namespace": namespace,
        "git_commits": selectors.commits_for_namespace(namespace),
        "environments": selectors.environments_in(namespace),
    })


def _field_errors(form, error: ValidationError) -> None:  # noqa: ANN001 - a Django form
    """Put the services' field errors on the form; unknown fields become form errors."""
    detail = error.detail if isinstance(error.detail, dict) else {None: error.detail}
    for field, problems in detail.items():
        target = field if field in form.fields else None
        for problem in problems if isinstance(problems, list) else [problems]:
            form.add_error(target, str(problem))


@login_required
def request_new(request: HttpRequest, slug: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    return render(request, "tenants/request_new.html", {
        "tenant": tenant, "kinds": [(kind, form.title) for kind, form in
                                    forms.REQUEST_FORMS.items()],
    })


@login_required
def request_form(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    form_class = forms.REQUEST_FORMS.get(kind)
    if form_class is None:
        raise Http404("No such kind of request.")
    form = form_class(request.POST or None, tenant=tenant)
    if request.method == "POST" and form.is_valid():
        try:
            created = services.submit_request(
                tenant=tenant, kind=form.kind, payload=form.payload(),
                requester=request.user, source_ip=client_ip(request),
            )
        except ValidationError as exc:
            _field_errors(form, exc)
        except NotAllowed as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Request #{created.pk} submitted: "
                                      f"{created.get_state_display().lower()}.")
            return redirect("request-detail", pk=created.pk)
    ephemeral = kind == RequestKind.EPHEMERAL
    return render(request, "tenants/request_form.html", {
        "tenant": tenant, "form": form, "kind": kind,
        "preview": kind in ("namespace", "environment", "project", "ephemeral"),
        # An ephemeral environment's namespace comes from the tenant's environment rules.
        "preview_view": "environment-preview" if ephemeral else "name-preview",
        "preview_template": ("tenants/_environment_preview.html" if ephemeral
                             else "tenants/_name_preview.html"),
        "env_preview": _environment_preview(tenant, request.POST) if ephemeral and form.is_bound
        else None,
    })


@login_required
def name_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The final namespace name while the user types (fetched by the form's script)."""
    tenant = selectors.visible_tenant(request.user, slug)
    app = request.GET.get("app") or request.GET.get("project") or ""
    tiers = request.GET.getlist("tiers") or [request.GET.get("tier", "")]
    previews = [
        selectors.name_preview(tenant, app=app.strip(), tier=tier,
                               cluster=request.GET.get("cluster", ""))
        for tier in tiers if tier
    ]
    return render(request, "tenants/_name_preview.html", {"previews": previews})


def _environment_preview(tenant, data) -> dict:  # noqa: ANN001 - Tenant, a QueryDict
    return selectors.environment_rules_preview(
        tenant, **{name: data.get(name, "") for name in
                   ("project", "env_slug", "branch", "mr_id", "cluster")},
    )


@login_required
def environment_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The namespace the tenant's environment rules give an ephemeral environment, as typed
    (fetched by the request form's script, like name_preview)."""
    tenant = selectors.visible_tenant(request.user, slug)
    return render(request, "tenants/_environment_preview.html",
                  {"env_preview": _environment_preview(tenant, request.GET)})


def _decide(request: HttpRequest, pk: int, action) -> HttpResponse:  # noqa: ANN001
    tenancy_request = selectors.visible_request(request.user, pk)
    try:
        action(tenancy_request)
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        messages.error(request, str(exc))
    return redirect("request-detail", pk=pk)


@login_required
@require_POST
def request_approve(request: HttpRequest, pk: int) -> HttpResponse:
    form = forms.ApproveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The approval did not say which plan it approves.")
        return redirect("request-detail", pk=pk)

    def approve(tenancy_request) -> None:  # noqa: ANN001
        # An approval is bound to the plan the approver saw: a plan that changed since the
        # page was rendered (a tier preset, the tenant, its namespaces) is shown again.
        # (Someone without the right is refused, and audited, by the service instead.)
        if (tenancy_request.state == RequestState.SUBMITTED
                and selectors.why_cannot_decide(request.user, tenancy_request) is None
                and engine.plan(tenancy_request).digest != form.cleaned_data["plan_digest"]):
            messages.error(request, "The plan changed since you opened this page: review the "
                                    "plan below and approve again if it is still right.")
            return
        decided = services.approve_request(
            request_id=tenancy_request.pk, approver=request.user,
            plan_digest=form.cleaned_data["plan_digest"], reason=form.cleaned_data["note"],
            source_ip=client_ip(request),
        )
        messages.success(request, f"Request #{decided.pk}: {decided.status_message or 'approved.'}")

    return _decide(request, pk, approve)


@login_required
@require_POST
def request_reject(request: HttpRequest, pk: int) -> HttpResponse:
    form = forms.RejectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A rejection needs a reason the requester can act on.")
        return redirect("request-detail", pk=pk)

    def reject(tenancy_request) -> None:  # noqa: ANN001
        services.reject_request(request_id=tenancy_request.pk, approver=request.user,
                                reason=form.cleaned_data["reason"], source_ip=client_ip(request))
        messages.success(request, f"Request #{tenancy_request.pk} rejected.")

    return _decide(request, pk, reject)


@login_required
@require_POST
def request_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    def cancel(tenancy_request) -> None:  # noqa: ANN001
        services.cancel_request(request_id=tenancy_request.pk, actor=request.user,
                                source_ip=client_ip(request))
        messages.success(request, f"Request #{tenancy_request.pk} cancelled.")

    return _decide(request, pk, cancel)


@login_required
@require_POST
def request_comment(request: HttpRequest, pk: int) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    form = forms.CommentForm(request.POST)
    if form.is_valid():
        services.add_comment(request_id=tenancy_request.pk, author=request.user,
                             body=form.cleaned_data["body"], source_ip=client_ip(request))
    else:
        messages.error(request, "A comment needs some text (at most 4000 characters).")
    return redirect("request-detail", pk=pk)


@login_required
def approval_queue(request: HttpRequest) -> HttpResponse:
    queue = RequestFilterSet(
        request.GET or None, queryset=selectors.decidable_by(request.user), request=request
    )
    return render(request, "tenants/approval_queue.html", {
        "filter": queue, "requests": queue.qs[:200],
    })


@login_required
def audit_log(request: HttpRequest) -> HttpResponse:
    if not selectors.may_see_audit(request.user):
        raise PermissionDenied("The audit log is for platform admins and tenant owners.")
    events = AuditEventFilterSet(
        request.GET or None, queryset=selectors.audit_events_visible_to(request.user),
        request=request,
    )
    if request.GET.get("format") == "csv":
        return _audit_csv(events.qs)
    return render(request, "tenants/audit_log.html", {"filter": events,
                                                      "events": events.qs[:500]})


class _Echo:
    def write(self, value: str) -> str:
        return value


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    # A leading =, +, - or @ would make a spreadsheet evaluate the cell as a formula.
    return f"'{text}" if text[:1] in ("=", "+", "-", "@") else text


def _audit_csv(events) -> StreamingHttpResponse:  # noqa: ANN001 - QuerySet[AuditEvent]
    writer = csv.writer(_Echo())
    header = ["time", "actor", "action", "object_type", "object_id", "object", "tenant",
              "source_ip", "before", "after"]

    def lines():  # noqa: ANN202 - a generator of CSV lines
        yield writer.writerow(header)
        for event in events.iterator(chunk_size=500):
            yield writer.writerow([_cell(value) for value in (
                event.created_at.isoformat(), event.actor_label, event.action,
                event.object_type, event.object_id, event.object_repr,
                event.tenant.slug if event.tenant else "", event.source_ip,
                event.before or "", event.after or "",
            )])

    response = StreamingHttpResponse(lines(), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="berth-audit.csv"'
    return response


def _require_platform_admin(request: HttpRequest) -> None:
    if not selectors.is_platform_admin(request.user):
        raise PermissionDenied("Only platform admins may do this.")


@login_required
def rule_list(request: HttpRequest) -> HttpResponse:
    _require_platform_admin(request)
    return render(request, "tenants/rule_list.html", {"rules": ApprovalRule.objects.all()})


@login_required
def rule_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    _require_platform_admin(request)
    rule = get_object_or_404(ApprovalRule, pk=pk) if pk else None
    form = forms.ApprovalRuleForm(request.POST or None, instance=rule)
    if request.method == "POST" and form.is_valid():
        saved = services.save_approval_rule(form=form, actor=request.user,
                                            source_ip=client_ip(request))
        messages.success(request, f"Rule {saved.name} saved.")
        return redirect("rule-list")
    return render(request, "tenants/rule_form.html", {"form": form, "rule": rule})


@login_required
def tenant_onboard(request: HttpRequest) -> HttpResponse:
    _require_platform_admin(request)
    form = forms.TenantOnboardingForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            tenant = services.onboard_tenant(actor=request.user, source_ip=client_ip(request),
                                             **form.service_arguments())
        except ValidationError as exc:
            _field_errors(form, exc)
        else:
            messages.success(request, f"Tenant {tenant.slug} is ready for requests.")
            return redirect("tenant-detail", slug=tenant.slug)
    return render(request, "tenants/tenant_onboard.html", {"form": form})


# --- ephemeral environments -------------------------------------------------------------------

ENDABLE = (EnvironmentState.STARTING, EnvironmentState.LIVE)


def _error_text(error: ValidationError) -> list[str]:
    detail = error.detail if isinstance(error.detail, dict) else {None: error.detail}
    return [str(problem) for problems in detail.values()
            for problem in (problems if isinstance(problems, list) else [problems])]


def _environment_page(
    request: HttpRequest,
    environment: EphemeralEnvironment,
    *,
    extend_form: forms.ExtendEnvironmentForm | None = None,
    end_form: forms.EndEnvironmentForm | None = None,
) -> HttpResponse:
    user, running = request.user, environment.state in ENDABLE
    manages = selectors.may_manage_environment(user, environment)
    return render(request, "tenants/environment_detail.html", {
        "environment": environment,
        "end_request": selectors.end_request_of(environment),
        "history": selectors.environment_history(environment),
        "may_extend": running and manages,
        "may_end": running and selectors.may_end_environment(user, environment),
        "extend_form": extend_form or forms.ExtendEnvironmentForm(),
        "end_form": end_form or forms.EndEnvironmentForm(),
        "now": timezone.now(),
    })


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
                environment_id=environment.pk, actor=request.user,
                ttl_seconds=form.cleaned_data["ttl"], source_ip=client_ip(request),
            )
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from exc
        except ValidationError as exc:
            _field_errors(form, exc)
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"{environment} now lives until "
                                      f"{extended.expires_at:%Y-%m-%d %H:%M} UTC.")
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
                environment_id=environment.pk, actor=request.user, cause=EndCause.ENDED_BY_USER,
                reason=form.cleaned_data["reason"], source_ip=client_ip(request),
            )
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from exc
        except ValidationError as exc:
            for problem in _error_text(exc):
                form.add_error(None, problem)
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            if ending is None:
                messages.success(request, f"{environment} ended before its request was decided: "
                                          "nothing had been created.")
            else:
                messages.success(request, f"{environment} is ending: request #{ending.pk} "
                                          "removes what it made.")
            return redirect("environment-detail", pk=pk)
    return _environment_page(request, environment, end_form=form)


@login_required
def environment_rules_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The tenant's environment rules: read by everyone in it, edited as YAML by its owners
    and platform admins; a GET form tries them on an imagined environment."""
    tenant = selectors.visible_tenant(request.user, slug)
    may_edit = selectors.may_edit_environment_rules(request.user, tenant)
    rules = list(tenant.environment_rules.all())
    form = forms.EnvironmentRulesForm(request.POST or None,
                                      initial={"rules": forms.rules_to_yaml(rules)})
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied(f"Only owners of {tenant.slug} and platform admins may "
                                   "change its environment rules.")
        if form.is_valid():
            try:
                saved = services.replace_environment_rules(
                    tenant=tenant, rules=form.cleaned_data["rules"], actor=request.user,
                    source_ip=client_ip(request),
                )
            except NotAllowed as exc:
                raise PermissionDenied(str(exc)) from exc
            except ValidationError as exc:
                _field_errors(form, exc)
            else:
                messages.success(request, f"{len(saved)} environment rule{'s' * (len(saved) != 1)}"
                                          f" saved for {tenant.slug}.")
                return redirect("environment-rules", slug=tenant.slug)
    try_form = forms.TryEnvironmentRulesForm(request.GET or None)
    return render(request, "tenants/environment_rules.html", {
        "tenant": tenant,
        "rules": rules,
        "may_edit": may_edit,
        "form": form,
        "try_form": try_form,
        "env_preview": selectors.environment_rules_preview(tenant, **try_form.variables())
        if try_form.is_bound else None,
        "default_template": environment_rules.DEFAULT_TEMPLATE,
        "semantics": environment_rules.__doc__,
    })


# --- API tokens (for the REST API, /api/v1/; see docs/api.md) -------------------------------


@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """Your API tokens; a new one's value is shown on this response only, never again."""
    from tenants.api.forms import ApiTokenForm
    from tenants.models import ApiToken

    form = ApiTokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            token, value = services.create_api_token(
                user=request.user, name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"], expires_at=form.expires_at(),
                source_ip=client_ip(request),
            )
        except ValidationError as exc:
            _field_errors(form, exc)
        else:
            created = {"token": token, "value": value}
            form = ApiTokenForm()
    response = render(request, "tenants/tokens.html", {
        "form": form, "created": created, "tokens": ApiToken.objects.of(request.user),
    })
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    from tenants.models import ApiToken

    token = get_object_or_404(ApiToken.objects.of(request.user), pk=pk)
    services.revoke_api_token(actor=request.user, token=token, source_ip=client_ip(request))
    messages.success(request, f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect("api-tokens")
