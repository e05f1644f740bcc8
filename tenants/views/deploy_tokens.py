"""A namespace's deploy tokens: mint one (its kubeconfig shown on that response only) and
revoke one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from tenants import forms, selectors, services
from tenants.client_address import client_ip
from tenants.errors import ClusterUnavailable, InvalidInput, NotAllowed
from tenants.models import DeployToken
from tenants.views.support import field_errors


@login_required
@require_POST
def deploy_token_mint(request: HttpRequest, pk: int) -> HttpResponse:
    namespace = selectors.visible_namespace(request.user, pk)
    form = forms.DeployTokenForm(request.POST)
    if form.is_valid():
        try:
            token, issued = services.mint_deploy_token(
                user=request.user,
                namespace=namespace,
                ttl_minutes=form.cleaned_data["ttl_minutes"],
                purpose=form.cleaned_data["purpose"],
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        except (NotAllowed, ClusterUnavailable) as exc:
            form.add_error(None, str(exc))
        else:
            response = render(
                request,
                "tenants/deploy_token_minted.html",
                {
                    "namespace": namespace,
                    "token": token,
                    "kubeconfig": selectors.token_kubeconfig(token, issued.token),
                },
            )
            response["Cache-Control"] = "no-store"
            return response
    for error in form.non_field_errors():
        messages.error(request, error)
    for name, errors in form.errors.items():
        if name != "__all__":
            messages.error(request, f"{form.fields[name].label or name}: {' '.join(errors)}")
    return redirect(_section_of(namespace.pk))


@login_required
@require_POST
def deploy_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        token = selectors.visible_deploy_token(request.user, pk)
    except DeployToken.DoesNotExist:
        raise Http404("No deploy token of this id among those you can see.") from None
    try:
        services.revoke_deploy_token(user=request.user, token=token, source_ip=client_ip(request))
    except NotAllowed as exc:
        messages.error(request, str(exc))
    except ClusterUnavailable as exc:
        messages.warning(
            request,
            f"Revoked in Berth, but the token still works until its ServiceAccount is removed, "
            f"which Berth retries: {exc}",
        )
    else:
        messages.success(request, f"Deploy token {token.service_account} revoked.")
    return redirect(_section_of(token.namespace_id))


def _section_of(namespace_id: int) -> str:
    return reverse("namespace-detail", args=[namespace_id]) + "#deploy-tokens"
