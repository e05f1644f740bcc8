"""When requests move, tell people: e-mail and the tenant's webhook, queued as tasks."""

from __future__ import annotations

from django.dispatch import receiver

from tenants.models import DeployToken, Request
from tenants.notifications import EVENTS, event_body, wants_email
from tenants.queue import enqueue
from tenants.signals import deploy_token_ended, request_state_changed
from tenants.tasks import deliver_webhook, send_deploy_token_ended, send_request_emails


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
