"""Notifications: e-mail to whoever must act or asked, and a signed, retried webhook."""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail

from portal.celery import app as celery_app
from tenants import demo, services
from tenants.models import Tenant, User
from tests.workflow import approve_if_needed


class Receiver(BaseHTTPRequestHandler):
    """A webhook receiver that fails its first `failures` deliveries."""

    deliveries: list = []
    failures = 0

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.deliveries.append((dict(self.headers), body))
        status = 503 if Receiver.failures > 0 else 204
        Receiver.failures -= 1
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


@pytest.fixture
def receiver():
    Receiver.deliveries, Receiver.failures = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks/berth"
    server.shutdown()


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in-process (retries included) instead of through a broker."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def world(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    return {"tenant": Tenant.objects.get(slug="payments"),
            "developer": User.objects.get(username="dev"),
            "admin": User.objects.get(username="pat")}


def submit(world, tier="prod"):
    return services.submit_request(
        tenant=world["tenant"], kind="namespace", requester=world["developer"],
        payload={"app": "shop", "tier": tier, "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )


def test_submission_mails_the_approvers_and_approval_mails_the_requester(
    world, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(world)
    assert mail.outbox[-1].to == ["pat@example.com"]
    assert f"request #{tenancy_request.pk} submitted" in mail.outbox[-1].subject

    with django_capture_on_commit_callbacks(execute=True):
        approve_if_needed(tenancy_request, approver=world["admin"])
    # Eager tasks also provision at once: nothing listens at the cluster URL, so it fails.
    by_subject = {message.subject.rsplit(" ", 1)[-1]: message for message in mail.outbox}
    assert by_subject["approved"].to == ["dev@example.com"]
    assert f"/requests/{tenancy_request.pk}/" in by_subject["approved"].body
    assert by_subject["failed"].to == ["dev@example.com"]
    assert "cluster unreachable" in by_subject["failed"].body


def test_webhook_is_signed_and_retried_until_the_receiver_accepts(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    Tenant.objects.filter(pk=world["tenant"].pk).update(webhook_url=receiver)
    tenant = Tenant.objects.get(pk=world["tenant"].pk)
    tenant.webhook_secret = "hook-secret"
    tenant.save()
    Receiver.failures = 2

    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(world)

    assert len(Receiver.deliveries) == 3  # two 503s, then accepted
    headers, body = Receiver.deliveries[-1]
    expected = "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
    assert headers["X-Berth-Signature"] == expected
    event = json.loads(body)
    assert event["event"] == "request.submitted"
    assert event["request"]["id"] == tenancy_request.pk
    assert event["request"]["tenant"] == "payments"


def test_no_webhook_configured_sends_nothing(world, receiver, eager_tasks,
                                             django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        submit(world)
    assert Receiver.deliveries == []


def test_review_apps_mail_nobody_on_the_way_but_webhooks_hear_everything(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    from tenants.models import Project

    Project.objects.create(tenant=world["tenant"], name="shop")
    Tenant.objects.filter(pk=world["tenant"].pk).update(webhook_url=receiver)
    with django_capture_on_commit_callbacks(execute=True):
        services.submit_request(tenant=world["tenant"], kind="ephemeral",
                                requester=world["developer"],
                                payload={"project": "shop", "env_slug": "review-1"})
    # Auto-approved, then (eagerly) provisioned against no cluster: only the failure mails.
    subjects = [message.subject for message in mail.outbox]
    assert not [s for s in subjects if s.endswith(("submitted", "approved"))], subjects
    assert [s for s in subjects if s.endswith("failed")]
    events = [json.loads(body)["event"] for _, body in Receiver.deliveries]
    assert {"request.submitted", "request.approved"} <= set(events)
