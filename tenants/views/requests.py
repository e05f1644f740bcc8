"""Pages of requests: asking (forms with a live name preview), the request page with its
plan and progress, and deciding (approve bound to the plan's digest, reject, cancel,
comment, retry).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from tenants import forms, provisioner, selectors, services
from tenants.client_address import client_ip
from tenants.errors import DomainError, InvalidInput, NotAllowed, PlanMoved
from tenants.kinds import kind_for
from tenants.views.environments import environment_preview_of
from tenants.views.support import field_errors


def _live_context(
    tenancy_request,
    user,
    *,
    digest: str,
    live: bool = False,
) -> dict:
    """What the live parts of a request page show (its header, the actions offered, its
    progress, decisions and history); the page and its poll render the same.
    `digest`: the plan the page shows, which its poll carries along. `live`: the poll's
    answer, which also brings what was committed once the plan is history."""
    planned = tenancy_request.state in provisioner.PLANNED_STATES
    context = {
        "tenancy_request": tenancy_request,
        "run": tenancy_request.runs.first(),
        "polling": tenancy_request.state in selectors.MOVING_STATES,
        "created": selectors.namespaces_of_request(tenancy_request),
        "planned": planned,
        "live": live,
        "digest": digest,
        "actions": selectors.request_actions(user, tenancy_request, plan_digest=digest),
        "history": selectors.request_history(tenancy_request).select_related("actor"),
        "approvals": tenancy_request.approvals.select_related("approver"),
        "environment": selectors.environment_of_request(tenancy_request),
    }
    if live and not planned:
        context["commits"] = selectors.commits_of_request(tenancy_request)
    return context


@login_required
def request_detail(request: HttpRequest, pk: int) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    review = selectors.review(tenancy_request)
    return render(
        request,
        "tenants/request_detail.html",
        {
            **_live_context(tenancy_request, request.user, digest=review.digest),
            "plan": review.plan,
            "plan_objects": review.plan.redacted() if review.plan else (),
            "plan_error": review.plan_error,
            "gitops_diff": review.gitops_diff,
            "gitops_error": review.gitops_error,
            "repository_warnings": review.repository_warnings,
            "commits": selectors.commits_of_request(tenancy_request),
            "comments": tenancy_request.comments.select_related("author"),
            "comment_form": forms.CommentForm(),
            "approve_form": forms.ApproveForm(initial={"plan_digest": review.digest}),
            "reject_form": forms.RejectForm(),
        },
    )


@login_required
def request_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The live parts of a request page, polled by it while the request moves."""
    tenancy_request = selectors.visible_request(request.user, pk)
    return render(
        request,
        "tenants/_request_progress.html",
        _live_context(
            tenancy_request, request.user, digest=request.GET.get("digest", "")[:100], live=True
        ),
    )


@login_required
@require_POST
def request_retry(request: HttpRequest, pk: int) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    try:
        services.retry_request(
            request_id=tenancy_request.pk,
            actor=request.user,
            plan_digest=selectors.review(tenancy_request).digest,
            source_ip=client_ip(request),
        )
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Request #{pk} is being provisioned again.")
    return redirect("request-detail", pk=pk)


@login_required
def request_new(request: HttpRequest, slug: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    return render(
        request,
        "tenants/request_new.html",
        {
            "tenant": tenant,
            "kinds": [(kind, form.title) for kind, form in forms.REQUEST_FORMS.items()],
        },
    )


@login_required
def request_form(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    tenant = selectors.visible_tenant(request.user, slug)
    form_class = forms.REQUEST_FORMS.get(kind)
    if form_class is None:
        raise Http404("No such kind of request.")
    form = form_class(request.POST or None, tenant=tenant, requester=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            created = services.submit_request(
                tenant=tenant,
                kind=form.kind,
                payload=form.payload(),
                requester=request.user,
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        except NotAllowed as exc:
            form.add_error(None, str(exc))
        else:
            # Its state is the page's live header: a message saying it would go stale.
            messages.success(request, f"Request #{created.pk} submitted.")
            return redirect("request-detail", pk=created.pk)
    declared = kind_for(kind)
    ephemeral = declared.starts_environment
    return render(
        request,
        "tenants/request_form.html",
        {
            "tenant": tenant,
            "form": form,
            "kind": kind,
            "preview": declared.previews_names,
            "form_note": declared.form_note,
            # An ephemeral environment's namespace comes from the tenant's environment rules.
            "preview_view": "environment-preview" if ephemeral else "name-preview",
            "preview_template": (
                "tenants/_environment_preview.html" if ephemeral else "tenants/_name_preview.html"
            ),
            "env_preview": environment_preview_of(tenant, request.POST)
            if ephemeral and form.is_bound
            else None,
        },
    )


@login_required
def name_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The namespaces a request would create, while the user types (fetched by the form's
    script), each said taken or refused as submission would say it."""
    tenant = selectors.visible_tenant(request.user, slug)
    app = request.GET.get("app") or request.GET.get("project") or ""
    tiers = request.GET.getlist("tiers") or [request.GET.get("tier", "")]
    preview = selectors.name_preview(
        tenant,
        app=app.strip(),
        tiers=[tier for tier in tiers if tier],
        cluster=request.GET.get("cluster", ""),
        engine=request.GET.get("engine", ""),  # only the project form has one
    )
    return render(request, "tenants/_name_preview.html", {"planned_names": preview})


def _decide(request: HttpRequest, pk: int, action) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    try:
        action(tenancy_request)
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except DomainError as exc:
        messages.error(request, str(exc))
    return _back(request, pk)


def _back(request: HttpRequest, pk: int) -> HttpResponse:
    """After a decision: back to the queue it was made from, else to the request's page."""
    if request.POST.get("back") == "queue":
        return redirect("approval-queue")
    return redirect("request-detail", pk=pk)


@login_required
@require_POST
def request_approve(request: HttpRequest, pk: int) -> HttpResponse:
    form = forms.ApproveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The approval did not say which plan it approves.")
        return _back(request, pk)

    def approve(tenancy_request) -> None:
        try:
            decided = services.approve_request(
                request_id=tenancy_request.pk,
                approver=request.user,
                plan_digest=form.cleaned_data["plan_digest"],
                reason=form.cleaned_data["note"],
                source_ip=client_ip(request),
            )
        except PlanMoved:
            # The plan shown again is the current one: the page renders it.
            messages.error(
                request,
                f"Request #{tenancy_request.pk}: the plan or its GitOps "
                "change moved since the queue was shown: open it to "
                "review them."
                if request.POST.get("back") == "queue"
                else "The plan or its GitOps change moved since you opened this "
                "page: review them below and approve again if still right.",
            )
            return
        messages.success(request, f"Request #{decided.pk}: {decided.status_message or 'approved.'}")

    return _decide(request, pk, approve)


@login_required
@require_POST
def request_reject(request: HttpRequest, pk: int) -> HttpResponse:
    form = forms.RejectForm(request.POST)
    if not form.is_valid():
        messages.error(
            request, f"Request #{pk}: a rejection needs a reason the requester can act on."
        )
        return _back(request, pk)

    def reject(tenancy_request) -> None:
        services.reject_request(
            request_id=tenancy_request.pk,
            approver=request.user,
            reason=form.cleaned_data["reason"],
            source_ip=client_ip(request),
        )
        messages.success(request, f"Request #{tenancy_request.pk} rejected.")

    return _decide(request, pk, reject)


@login_required
@require_POST
def request_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    def cancel(tenancy_request) -> None:
        services.cancel_request(
            request_id=tenancy_request.pk, actor=request.user, source_ip=client_ip(request)
        )
        messages.success(request, f"Request #{tenancy_request.pk} cancelled.")

    return _decide(request, pk, cancel)


@login_required
@require_POST
def request_comment(request: HttpRequest, pk: int) -> HttpResponse:
    tenancy_request = selectors.visible_request(request.user, pk)
    form = forms.CommentForm(request.POST)
    if form.is_valid():
        services.add_comment(
            request_id=tenancy_request.pk,
            author=request.user,
            body=form.cleaned_data["body"],
            source_ip=client_ip(request),
        )
    else:
        messages.error(request, "A comment needs some text (at most 4000 characters).")
    return redirect("request-detail", pk=pk)
