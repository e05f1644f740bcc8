"""When a request moves, tell people: e-mail and the tenant's webhook, queued as tasks."""

from __future__ import annotations

from django.dispatch import receiver

from tenants.models import Request
from tenants.notifications import EVENTS, event_body, recipients, wants_email
from tenants.signals import request_state_changed
from tenants.tasks import deliver_webhook, enqueue, send_request_email


@receiver(request_state_changed, sender=Request)
def notify(sender, *, request_id: int, action: str, **_: object) -> None:  # noqa: ANN001
    event = EVENTS.get(action)
    if event is None:
        return
    tenancy_request = Request.objects.select_related("tenant", "requester").get(pk=request_id)
    if wants_email(tenancy_request, event) and recipients(tenancy_request, event):
        enqueue(send_request_email, request_id, event)
    if tenancy_request.tenant.webhook_url:
        enqueue(deliver_webhook, tenancy_request.tenant_id, event_body(tenancy_request, event))
