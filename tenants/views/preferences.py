"""A person's own settings: which notifications they are e-mailed."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from tenants import forms, services
from tenants.client_address import client_ip
from tenants.errors import InvalidInput
from tenants.views.support import field_errors


@login_required
def notification_settings(request: HttpRequest) -> HttpResponse:
    form = forms.NotificationsForm.for_user(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.set_muted_notifications(
                user=request.user, muted=form.muted(), source_ip=client_ip(request)
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        else:
            muted = len(request.user.muted_notifications)
            messages.success(
                request,
                "Saved: "
                + (
                    "you are e-mailed about everything."
                    if not muted
                    else f"you are not e-mailed about {muted} kind{'s' if muted != 1 else ''} "
                    "of event."
                ),
            )
            return redirect("notification-settings")
    return render(request, "tenants/notification_settings.html", {"form": form})
