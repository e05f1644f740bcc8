"""Webhooks Berth POSTs for its users go only where they should. A webhook URL is typed by a
person; Berth must not POST signed events against its own network for them (loopback, cloud
metadata at 169.254.169.254, private ranges, Berth itself) unless the operator allows that
network (BERTH_EGRESS_ALLOW): refused when it is typed, in the API and the admin, and again
when it is delivered, to the address that was checked, never following a redirect. The
suite's settings allow loopback (its servers live there); these tests take it away."""

from __future__ import annotations

import hashlib
import hmac
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tenants import tasks
from tenants.models import Tenant
from tests.support.factories import TenantFactory
from tests.support.security_egress import resolving
from tests.support.servers import serving

EVENT = {"event": "request.ready", "request": {"id": 7, "tenant": "payments"}}


class Recorder(BaseHTTPRequestHandler):
    """Records every request; answers `status`, with `location` when it is a redirect."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append((dict(self.headers), body))
        self.send_response(self.server.status)
        if self.server.location:
            self.send_header("Location", self.server.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args) -> None:
        pass


class Receiver:
    def __init__(self, status: int = 204, location: str = "") -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        self.server.received, self.server.status = [], status
        self.server.location = location
        self.port = self.server.server_address[1]
        self._serving = serving(self.server)

    @property
    def received(self) -> list:
        return self.server.received

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/hooks/berth"

    def __enter__(self) -> Receiver:
        self._serving.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._serving.__exit__(None, None, None)


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


def with_webhook(url: str, secret: str = "hook-secret") -> Tenant:
    """A tenant whose webhook was saved before its address became refused (DNS changes;
    an operator narrows BERTH_EGRESS_ALLOW): only the check at delivery stands between."""
    tenant = TenantFactory(slug="payments")
    Tenant.objects.filter(pk=tenant.pk).update(webhook_url=url)
    tenant.refresh_from_db()
    tenant.webhook_secret = secret
    tenant.save()
    return tenant


def set_webhook(admin_api, url: str):
    """The platform admin sets payments' webhook over the API."""
    return admin_api.patch("/api/v1/tenants/payments/", {"webhook_url": url}, format="json")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "https://127.0.0.1/hooks",
        "http://169.254.169.254/latest/meta-data/iam/",
        "https://10.20.30.40/hooks",
        "https://192.168.1.1/hooks",
        "https://[::1]/hooks",
        "https://[::ffff:127.0.0.1]/hooks",
        "https://[fe80::1]/hooks",
        "https://0.0.0.0/hooks",
        "https://localhost/hooks",
    ],
)
def test_a_webhook_into_berths_own_network_is_refused_naming_webhook_url(
    admin_api, no_loopback, url
):
    tenant = TenantFactory(slug="payments")
    response = set_webhook(admin_api, url)
    assert response.status_code == 400, response.content
    assert "BERTH_EGRESS_ALLOW" in str(response.json()["errors"]["webhook_url"])
    tenant.refresh_from_db()
    assert tenant.webhook_url == ""


def test_a_webhook_to_a_name_resolving_inside_is_refused_with_the_address_it_resolves_to(
    admin_api, no_loopback, monkeypatch
):
    resolving(monkeypatch, {"hooks.example.test": "10.0.0.5"})
    TenantFactory(slug="payments")
    response = set_webhook(admin_api, "https://hooks.example.test/berth")
    assert response.status_code == 400
    (message,) = response.json()["errors"]["webhook_url"]
    assert "hooks.example.test resolves to 10.0.0.5, a private address" in message


def test_a_webhook_with_credentials_in_its_url_is_refused(admin_api, monkeypatch):
    resolving(monkeypatch, {"hooks.example.test": "127.0.0.1"})
    TenantFactory(slug="payments")
    response = set_webhook(admin_api, "https://user:pw@hooks.example.test/")
    assert response.status_code == 400
    assert "webhook secret" in str(response.json()["errors"]["webhook_url"])


def test_plain_http_webhooks_go_only_to_networks_the_operator_allows(
    admin_api, monkeypatch, settings
):
    resolving(monkeypatch, {"hooks.example.test": "127.0.0.1"})
    tenant = TenantFactory(slug="payments")
    allowed = set_webhook(admin_api, "http://hooks.example.test:8080/berth")
    assert allowed.status_code == 200, allowed.content
    tenant.refresh_from_db()
    assert tenant.webhook_url == "http://hooks.example.test:8080/berth"

    settings.BERTH_EGRESS_ALLOW = []
    refused = set_webhook(admin_api, "http://8.8.8.8/berth")
    assert refused.status_code == 400
    assert "https://" in str(refused.json()["errors"]["webhook_url"])


def test_the_admin_refuses_a_webhook_into_berths_network_too(db, no_loopback):
    from django.forms import modelform_factory

    from tenants.admin import TenantForm

    tenant = TenantFactory(slug="payments")
    form = modelform_factory(Tenant, form=TenantForm, fields=["webhook_url"])(
        instance=tenant, data={"webhook_url": "http://169.254.169.254/"}
    )
    assert not form.is_valid()
    assert "BERTH_EGRESS_ALLOW" in str(form.errors["webhook_url"])


# --- webhooks: refused again when they are delivered ------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_delivery_to_a_refused_address_sends_nothing_and_is_not_retried(
    db, receiver, no_loopback, host, caplog
):
    tenant = with_webhook(receiver.url(host))
    assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 0
    assert receiver.received == []
    assert "not sent" in caplog.text and "BERTH_EGRESS_ALLOW" in caplog.text
    assert "hook-secret" not in caplog.text


def test_delivery_to_an_allowed_network_posts_the_signed_event(db, receiver):
    tenant = with_webhook(receiver.url())
    assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 204
    ((headers, body),) = receiver.received
    assert json.loads(body) == EVENT
    assert headers["X-Berth-Signature"] == (
        "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
    )


def test_delivery_connects_to_the_address_it_checked_keeping_the_name_as_host(
    db, receiver, monkeypatch
):
    # The name resolves only for the check: reaching the receiver at all means the
    # connection went to the checked address, not to a second lookup of the name.
    resolving(monkeypatch, {"hooks.example.test": "127.0.0.1"})
    tenant = with_webhook(receiver.url("hooks.example.test"))
    assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 204
    ((headers, _),) = receiver.received
    assert headers["Host"] == f"hooks.example.test:{receiver.port}"


def test_a_redirect_is_not_followed_nor_retried(db, receiver, caplog):
    with Receiver(status=302, location=receiver.url("localhost")) as redirecting:
        tenant = with_webhook(redirecting.url())
        assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 302
        assert len(redirecting.received) == 1
    assert receiver.received == []
    assert "redirect" in caplog.text and "not followed" in caplog.text
