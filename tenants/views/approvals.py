"""The approval queue, and the approval rules (CEL) that decide who must approve."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from tenants import forms, selectors, services
from tenants.client_address import client_ip
from tenants.errors import DomainError, NotAllowed, PlanMoved
from tenants.filtersets import RequestFilterSet
from tenants.models import ApprovalRule
from tenants.views.support import require_platform_admin

QUEUE_PAGE_SIZE = services.APPROVE_TOGETHER_MAX


@login_required
def approval_queue(request: HttpRequest) -> HttpResponse:
    queue = RequestFilterSet(
        request.GET or None, queryset=selectors.decidable_by(request.user), request=request
    )
    page = Paginator(queue.qs, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    # Each row is decided right here, so each carries the digest of the plan it approves,
    # as last reviewed: approving checks it against the plan as it renders then.
    reviews = selectors.queue_reviews(list(page))
    rows = [(item, reviews[item.pk]) for item in page]
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "tenants/approval_queue.html",
        {
            "filter": queue,
            "page": page,
            "rows": rows,
            "query": query.urlencode(),
            "approve_form": forms.ApproveTogetherForm(),
        },
    )


@login_required
@require_POST
def approve_selected(request: HttpRequest) -> HttpResponse:
    """Bulk approval from the queue: every selected request, each bound to the digest of the
    plan its row showed, or none of them."""
    form = forms.ApproveTogetherForm(request.POST)
    if not form.is_valid():
        messages.error(
            request, " ".join(form.errors.get("selected", [])) or "Select the requests to approve."
        )
        return redirect("approval-queue")
    for request_id, _ in form.cleaned_data["selected"]:
        try:
            selectors.visible_request(request.user, request_id)
        except Http404:
            messages.error(request, f"Request #{request_id} does not exist.")
            return redirect("approval-queue")
    try:
        approved = services.approve_together(
            decisions=form.cleaned_data["selected"],
            approver=request.user,
            reason=form.cleaned_data["note"],
            source_ip=client_ip(request),
        )
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except PlanMoved as exc:
        moved = ", ".join(f"#{request_id}" for request_id in exc.request_ids)
        messages.error(
            request,
            f"The plan of {moved} moved since the queue was "
            "shown: nothing was approved. Review them and approve again.",
        )
    except DomainError as exc:
        messages.error(request, f"Nothing was approved: {exc}")
    else:
        messages.success(request, "Approved " + ", ".join(f"#{r.pk}" for r in approved) + ".")
    return redirect("approval-queue")


@login_required
def rule_list(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    return render(request, "tenants/rule_list.html", {"rules": ApprovalRule.objects.all()})


@login_required
def rule_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    """Edit or add a rule; "Try before saving" replays the rules as saving would leave them
    over past decisions and shows what would change, saving nothing."""
    require_platform_admin(request)
    rule = get_object_or_404(ApprovalRule, pk=pk) if pk else None
    form = forms.ApprovalRuleForm(request.POST or None, instance=rule)
    trying = request.method == "POST" and "try" in request.POST
    whatif_form = forms.WhatIfForm(request.POST if trying else None)
    found = None
    if request.method == "POST" and form.is_valid():
        if not trying:
            saved = services.save_approval_rule(
                form=form, actor=request.user, source_ip=client_ip(request)
            )
            messages.success(request, f"Rule {saved.name} saved.")
            return redirect("rule-list")
        if whatif_form.is_valid():
            proposal = selectors.rules_with_edit(
                pk=rule.pk if rule else None,
                rule=services.proposed_from(form.cleaned_data),
                position=form.cleaned_data["position"],
            )
            found = services.try_approval_rules(
                actor=request.user, rules=proposal, **whatif_form.filters()
            )
    return render(
        request,
        "tenants/rule_form.html",
        {
            "form": form,
            "rule": rule,
            "whatif_form": whatif_form,
            "whatif": found,
            "tried": trying,
        },
    )
