"""The approval queue, and the approval rules (CEL) that decide who must approve."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from tenants import forms, selectors, services
from tenants.filtersets import RequestFilterSet
from tenants.models import ApprovalRule
from tenants.views.support import client_ip, require_platform_admin


@login_required
def approval_queue(request: HttpRequest) -> HttpResponse:
    queue = RequestFilterSet(
        request.GET or None, queryset=selectors.decidable_by(request.user), request=request
    )
    return render(request, "tenants/approval_queue.html", {
        "filter": queue, "requests": queue.qs[:200],
    })


@login_required
def rule_list(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    return render(request, "tenants/rule_list.html", {"rules": ApprovalRule.objects.all()})


@login_required
def rule_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    require_platform_admin(request)
    rule = get_object_or_404(ApprovalRule, pk=pk) if pk else None
    form = forms.ApprovalRuleForm(request.POST or None, instance=rule)
    if request.method == "POST" and form.is_valid():
        saved = services.save_approval_rule(form=form, actor=request.user,
                                            source_ip=client_ip(request))
        messages.success(request, f"Rule {saved.name} saved.")
        return redirect("rule-list")
    return render(request, "tenants/rule_form.html", {"form": form, "rule": rule})
