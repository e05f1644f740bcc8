"""Helpers the tests of notifications (tests/tenants/test_notification*.py) share: a webhook
receiver, a request as the tests submit it, and the mails about one event."""

from http.server import BaseHTTPRequestHandler

from django.core import mail

from tenants.models import Request, Tenant
from tests.support.workflow import ask_for_namespace


class Receiver(BaseHTTPRequestHandler):
    """A webhook receiver that fails its first `failures` deliveries."""

    deliveries: list = []
    failures = 0

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.deliveries.append((dict(self.headers), body))
        status = 503 if Receiver.failures > 0 else 204
        Receiver.failures -= 1
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def submit(world, tier="prod"):
    return ask_for_namespace(
        world["tenant"], world["developer"], app="shop", tier=tier, cpu="1", memory="1Gi"
    )


def outbox_for(event_words: str) -> list:
    return [m for m in mail.outbox if m.subject.endswith(event_words)]


def hooked_request_in(world, receiver, state: str) -> Request:
    """A request of a tenant with a webhook, moved to `state` (as a worker would)."""
    Tenant.objects.filter(pk=world["tenant"].pk).update(webhook_url=receiver)
    tenancy_request = submit(world)
    Request.objects.filter(pk=tenancy_request.pk).update(state=state)
    return tenancy_request
