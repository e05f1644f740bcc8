"""A namespace's sleep, as pages: its section on the namespace's page (asleep or awake, until
when, its schedule, who carries it out), "Wake now", and asking for another schedule (a
request of kind "sleep": the approval rules decide, its page follows it). The services
check who may and audit what is done (tenants.services.sleep)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from tenants import selectors
from tenants.choices import NamespaceState, SleepMode
from tenants.client_address import client_ip
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.forms.sleep import SleepScheduleForm, WakeForm
from tenants.models import Namespace, User
from tenants.selectors.sleep import sleep_status
from tenants.services.sleep import may_wake, request_sleep_schedule, wake_namespace
from tenants.views.support import field_errors


def sleep_panel(user: User, namespace: Namespace) -> dict[str, Any] | None:
    """The namespace page's "Sleep" section; None for a namespace that is not live."""
    if namespace.state != NamespaceState.ACTIVE:
        return None
    status = sleep_status(namespace)
    return {
        "status": status,
        "mode": SleepMode(namespace.sleep_mode),
        "may_wake": namespace.sleeps() and may_wake(user, namespace),
        "may_ask": selectors.may_request(user, namespace.tenant),
        "wake_form": WakeForm(namespace=namespace),
        "schedule_form": SleepScheduleForm(namespace=namespace),
    }


@login_required
@require_POST
def namespace_wake(request: HttpRequest, pk: int) -> HttpResponse:
    """Wake now (or keep awake), for the hours asked: owners, members, platform admins."""
    namespace = selectors.visible_namespace(request.user, pk)  # 404 outside one's tenants
    if not may_wake(request.user, namespace):
        raise PermissionDenied(
            "Only the namespace's owners and members or a platform admin wake it."
        )
    form = WakeForm(request.POST, namespace=namespace)
    if form.is_valid():
        try:
            until = wake_namespace(
                namespace_id=namespace.pk,
                actor=request.user,
                hours=form.cleaned_data["hours"],
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
                request,
                f"{namespace.name} stays awake until {until:%Y-%m-%d %H:%M} UTC"
                + (
                    ": its workloads come back within a minute."
                    if namespace.asleep
                    else ", past its schedule's sleep."
                ),
            )
            return redirect(_section_of(namespace))
    for problem in form.non_field_errors():
        messages.error(request, problem)
    for problem in form.errors.get("hours", []):
        messages.error(request, f"Not woken: {problem}")
    return redirect(_section_of(namespace))


@login_required
def namespace_sleep_schedule(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask for another sleep schedule: its tier's, its own, or none. On the namespace's page
    as a small form; here again with what was wrong, field by field."""
    namespace = selectors.visible_namespace(request.user, pk)
    if namespace.state != NamespaceState.ACTIVE:
        messages.error(request, f"{namespace.name} is not live: it has no sleep to change.")
        return redirect(_section_of(namespace))
    form = SleepScheduleForm(request.POST or None, namespace=namespace)
    if request.method == "POST" and form.is_valid():
        try:
            asked = request_sleep_schedule(
                namespace=namespace,
                requester=request.user,
                schedule=form.schedule(),
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            field_errors(form, exc)
        except DomainError as exc:  # NotAllowed included: a rule that denies says why
            form.add_error(None, str(exc))
        else:
            messages.success(
                request,
                f"Asked to change {namespace.name}'s sleep schedule "
                f"({SleepMode(form.cleaned_data['mode']).label}): request #{asked.pk} is "
                f"{asked.get_state_display().lower()}; Berth applies it once it is approved.",
            )
            return redirect("request-detail", pk=asked.pk)
    return render(
        request,
        "tenants/namespace_sleep.html",
        {"namespace": namespace, "sleep": sleep_status(namespace), "form": form},
    )


def _section_of(namespace: Namespace) -> str:
    return reverse("namespace-detail", args=[namespace.pk]) + "#sleep"
