"""When requests move or a tenant passes a share of its budget, tell people: e-mail and the
tenant's webhook, queued as tasks."""

from __future__ import annotations

from django.dispatch import receiver

from tenants.models import BudgetAlert, DeployToken, Request, Tenant
from tenants.notifications import EVENTS, event_body, wants_email
from tenants.queue import enqueue
from tenants.signals import budget_threshold_reached, deploy_token_ended, request_state_changed
from tenants.tasks import (
    check_budget_alerts,
    deliver_webhook,
    send_budget_alert,
    send_deploy_token_ended,
    send_request_emails,
)


@receiver(request_state_changed, sender=Request)
def notify(sender, *, request_ids: list[int], action: str, **_: object) -> None:
    """One e-mail job for the requests one transition moved (it finds who hears of each),
    one webhook delivery per request."""
    event = EVENTS.get(action)
    if event is None:
        return
    moved = list(
        Request.objects.select_related("tenant", "requester")
        .filter(pk__in=request_ids)
        .order_by("pk")
    )
    mailed = [moving.pk for moving in moved if wants_email(moving, event)]
    if mailed:
        enqueue(send_request_emails, mailed, event)
    for tenancy_request in moved:
        if tenancy_request.tenant.webhook_url:
            enqueue(deliver_webhook, tenancy_request.tenant_id, event_body(tenancy_request, event))


@receiver(deploy_token_ended, sender=DeployToken)
def tell_the_minter(sender, *, token_id: int, reason: str, **_: object) -> None:
    enqueue(send_deploy_token_ended, token_id, reason)


@receiver(request_state_changed, sender=Request)
def check_budgets_once_ready(sender, *, request_ids: list[int], action: str, **_: object) -> None:
    """A request Ready: what its tenant holds, and so costs, may have jumped (a namespace, a
    larger quota): its budget alerts are checked now, not at beat's next round."""
    if action == "mark_ready":
        tenants = Request.objects.filter(pk__in=request_ids).values_list("tenant_id", flat=True)
        enqueue(check_budget_alerts, sorted(set(tenants)))


@receiver(budget_threshold_reached, sender=BudgetAlert)
def tell_the_owners(sender, *, tenant_id: int, event: dict, **_: object) -> None:
    enqueue(send_budget_alert, tenant_id, event)
    if Tenant.objects.filter(pk=tenant_id).exclude(webhook_url="").exists():
        enqueue(deliver_webhook, tenant_id, event)
