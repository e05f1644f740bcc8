"""Upgrade campaigns: platform admins start one, read its grouped diffs, decide it, watch
it roll out, pause, resume or roll it back."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from tenants import forms, selectors, services
from tenants.client_address import client_ip
from tenants.errors import DomainError, InvalidInput
from tenants.views.support import field_errors, require_platform_admin


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    require_platform_admin(request)
    form = forms.CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.create_campaign(
                actor=request.user, source_ip=client_ip(request), **form.cleaned_data
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        except DomainError as exc:  # a cluster could not be read: nothing was made
            form.add_error(None, str(exc))
        else:
            files = campaign.commits.count()
            messages.success(
                request,
                f"Campaign #{campaign.pk}: {campaign.targets.count()} "
                "namespace(s) would change"
                + (f", and {files} repository commit(s)" if files else "")
                + f". {campaign.status_message}",
            )
            return redirect("campaign-detail", pk=campaign.pk)
    return render(
        request,
        "tenants/campaign_list.html",
        {"form": form, "campaigns": selectors.campaigns()[:100]},
    )


@login_required
def campaign_detail(request: HttpRequest, pk: int) -> HttpResponse:
    require_platform_admin(request)
    campaign = selectors.campaign(pk)
    return render(
        request,
        "tenants/campaign_detail.html",
        {
            "campaign": campaign,
            "groups": selectors.diff_groups(campaign),
            "targets": selectors.campaign_targets(campaign),
            "commits": selectors.campaign_commits(campaign),
        },
    )


@login_required
@require_POST
def campaign_move(request: HttpRequest, pk: int, move: str) -> HttpResponse:
    require_platform_admin(request)
    if move not in services.CAMPAIGN_MOVES:
        raise Http404("No such move.")
    try:
        campaign = services.CAMPAIGN_MOVES[move](
            campaign_id=selectors.campaign(pk).pk, actor=request.user, source_ip=client_ip(request)
        )
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, campaign.status_message)
    return redirect("campaign-detail", pk=pk)
