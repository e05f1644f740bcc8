"""Personal API tokens (for the REST API, /api/v1/; see docs/api.md)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from tenants import forms, services
from tenants.client_address import client_ip
from tenants.errors import InvalidInput
from tenants.models import ApiToken
from tenants.views.support import field_errors


@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """Your API tokens; a new one's value is shown on this response only, never again."""
    form = forms.ApiTokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            token, value = services.create_api_token(
                user=request.user,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                expires_at=form.expires_at(),
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        else:
            created = {"token": token, "value": value}
            form = forms.ApiTokenForm()
    response = render(
        request,
        "tenants/tokens.html",
        {
            "form": form,
            "created": created,
            "tokens": ApiToken.objects.of(request.user),
        },
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken.objects.of(request.user), pk=pk)
    services.revoke_api_token(actor=request.user, token=token, source_ip=client_ip(request))
    messages.success(request, f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect("api-tokens")
