"""Notifications: e-mail to whoever must act or asked, and a signed, retried webhook."""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings
from django.core import mail

from portal.celery import app as celery_app
from tenants import demo, services
from tenants.models import Request, Tenant, User
from tenants.services.lifecycle import transition
from tests.support.workflow import approve_if_needed


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
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
    }


def submit(world, tier="prod"):
    return services.submit_request(
        tenant=world["tenant"],
        kind="namespace",
        requester=world["developer"],
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


def test_no_webhook_configured_sends_nothing(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
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
        services.submit_request(
            tenant=world["tenant"],
            kind="ephemeral",
            requester=world["developer"],
            payload={"project": "shop", "env_slug": "review-1"},
        )
    # Auto-approved, then (eagerly) provisioned against no cluster: only the failure mails.
    subjects = [message.subject for message in mail.outbox]
    assert not [s for s in subjects if s.endswith(("submitted", "approved"))], subjects
    assert [s for s in subjects if s.endswith("failed")]
    events = [json.loads(body)["event"] for _, body in Receiver.deliveries]
    assert {"request.submitted", "request.approved"} <= set(events)


# --- every state a person waits on, and each person's opt-out ---------------------------------


def outbox_for(event_words: str) -> list:
    return [m for m in mail.outbox if m.subject.endswith(event_words)]


def test_submission_mail_shows_what_was_asked_for_in_people_units(
    world, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        submit(world)
    body = mail.outbox[-1].body
    assert "cpu: 1 core\n" in body and "memory: 1 GiB\n" in body and "app: shop\n" in body
    assert "cpu_millis" not in body and "memory_mib" not in body


@pytest.mark.parametrize(
    ("who", "told"),
    [
        ("developer", ["pat@example.com"]),  # the requester withdrew it: the approver hears
        ("admin", ["dev@example.com"]),  # the admin cancelled it: the requester hears
    ],
)
def test_cancel_tells_whoever_waited_on_it_but_not_the_one_who_cancelled(
    world, eager_tasks, django_capture_on_commit_callbacks, who, told
):
    tenancy_request = submit(world)
    with django_capture_on_commit_callbacks(execute=True):
        services.cancel_request(request_id=tenancy_request.pk, actor=world[who])
    [message] = outbox_for("cancelled")
    assert message.to == told
    assert f"Request #{tenancy_request.pk}" in message.body and "was cancelled" in message.body


def hooked_request_in(world, receiver, state: str) -> Request:
    """A request of a tenant with a webhook, moved to `state` (as a worker would)."""
    Tenant.objects.filter(pk=world["tenant"].pk).update(webhook_url=receiver)
    tenancy_request = submit(world)
    Request.objects.filter(pk=tenancy_request.pk).update(state=state)
    return tenancy_request


def test_return_to_approval_tells_requester_and_approvers(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    tenancy_request = hooked_request_in(world, receiver, "approved")
    with django_capture_on_commit_callbacks(execute=True):
        services.return_to_approval(
            request_id=tenancy_request.pk, reason="The prod tier's Pod Security changed."
        )
    [message] = outbox_for("back awaiting approval: its plan changed")
    assert message.to == ["dev@example.com", "pat@example.com"]
    assert "The prod tier's Pod Security changed." in message.body
    events = [json.loads(body)["event"] for _, body in Receiver.deliveries]
    assert "request.returned" in events


def test_retry_decommissioning_and_decommissioned_tell_the_requester(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    tenancy_request = hooked_request_in(world, receiver, "ready")
    with django_capture_on_commit_callbacks(execute=True):
        services.start_decommission(
            request_id=tenancy_request.pk,
            actor=world["admin"],
            reason="Decommission requested in #9.",
        )
        services.mark_decommissioned(request_id=tenancy_request.pk)
    Request.objects.filter(pk=tenancy_request.pk).update(state="failed")
    with django_capture_on_commit_callbacks(execute=True):
        transition(request_id=tenancy_request.pk, action="retry", actor=world["admin"])

    for words in ("being decommissioned", "decommissioned", "being provisioned again"):
        messages = outbox_for(words)
        assert messages and messages[0].to == ["dev@example.com"], words
    events = {json.loads(body)["event"] for _, body in Receiver.deliveries}
    assert {"request.decommissioning", "request.decommissioned", "request.retried"} <= events


def test_a_person_who_muted_an_event_is_not_mailed_it_but_others_and_webhooks_are(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    Tenant.objects.filter(pk=world["tenant"].pk).update(
        webhook_url=receiver, notify_emails=["payments-team@example.com"]
    )
    services.set_muted_notifications(user=world["admin"], muted=["submitted"])
    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(world)
    [message] = outbox_for("submitted")
    assert message.to == ["payments-team@example.com"]  # not pat, who muted it
    assert [json.loads(body)["event"] for _, body in Receiver.deliveries] == ["request.submitted"]

    with django_capture_on_commit_callbacks(execute=True):
        services.cancel_request(request_id=tenancy_request.pk, actor=world["developer"])
    assert "pat@example.com" in outbox_for("cancelled")[0].to  # only what was muted


def test_unknown_events_cannot_be_muted(world):
    from tenants.errors import InvalidInput

    with pytest.raises(InvalidInput) as error:
        services.set_muted_notifications(user=world["developer"], muted=["ready", "lunch"])
    assert "lunch" in str(error.value.field_errors)
    world["developer"].refresh_from_db()
    assert world["developer"].muted_notifications == []


def test_notifications_page_saves_the_choice_and_audits_it(client, world):
    from tenants.models import AuditEvent

    client.force_login(world["developer"])
    page = client.get("/settings/notifications/").content.decode()
    assert page.count('type="checkbox"') == 11 and page.count("checked") == 11

    wanted = [
        "submitted",
        "approved",
        "rejected",
        "cancelled",
        "returned",
        "retried",
        "failed",
        "decommissioning",
        "decommissioned",
        "expiring",
    ]
    response = client.post("/settings/notifications/", {"wanted": wanted}, follow=True)

    assert "you are not e-mailed about 1 kind of event" in response.content.decode()
    world["developer"].refresh_from_db()
    assert world["developer"].muted_notifications == ["ready"]
    assert AuditEvent.objects.get(action="user.notifications").after == {"muted": ["ready"]}
    bad = client.post("/settings/notifications/", {"wanted": ["lunch"]})
    assert bad.status_code == 200 and "lunch is not one of the available choices" in (
        bad.content.decode().replace("&quot;", "")
    )
    world["developer"].refresh_from_db()
    assert world["developer"].muted_notifications == ["ready"]


# --- each new event's e-mail and webhook, as people and receivers read them ------------------

ASKED = {"app": "shop", "tier": "prod", "cluster": "sandbox", "cpu": "1", "memory": "2Gi"}


def in_state(state: str):
    return lambda world, tenancy_request: Request.objects.filter(pk=tenancy_request.pk).update(
        state=state
    )


# How each event comes about for a submitted prod namespace request, step by step.
BRING_ABOUT = {
    "cancelled": [
        lambda world, r: services.cancel_request(request_id=r.pk, actor=world["developer"])
    ],
    "returned": [
        in_state("approved"),
        lambda world, r: services.return_to_approval(
            request_id=r.pk, reason="The prod tier's quota defaults changed."
        ),
    ],
    "retried": [
        in_state("failed"),
        lambda world, r: transition(request_id=r.pk, action="retry", actor=world["admin"]),
    ],
    "decommissioning": [
        in_state("ready"),
        lambda world, r: services.start_decommission(
            request_id=r.pk, actor=None, reason="Decommission requested in #9."
        ),
    ],
    "decommissioned": [
        in_state("decommissioning"),
        lambda world, r: services.mark_decommissioned(request_id=r.pk),
    ],
}
SUBJECT_WORDS = {
    "cancelled": "cancelled",
    "returned": "back awaiting approval: its plan changed",
    "retried": "being provisioned again",
    "decommissioning": "being decommissioned",
    "decommissioned": "decommissioned",
}


@pytest.mark.parametrize("event", list(BRING_ABOUT))
def test_each_waited_on_event_mails_what_was_asked_in_peoples_units_and_posts_the_webhook(
    world, receiver, eager_tasks, django_capture_on_commit_callbacks, event
):
    Tenant.objects.filter(pk=world["tenant"].pk).update(webhook_url=receiver)
    tenancy_request = services.submit_request(
        tenant=world["tenant"], kind="namespace", requester=world["developer"], payload=ASKED
    )
    mail.outbox.clear()
    Receiver.deliveries.clear()
    for step in BRING_ABOUT[event]:
        with django_capture_on_commit_callbacks(execute=True):
            step(world, tenancy_request)

    tenancy_request.refresh_from_db()
    [message] = [
        m
        for m in mail.outbox
        if m.subject == f"[Berth] payments: request #{tenancy_request.pk} {SUBJECT_WORDS[event]}"
    ]
    assert f"Request #{tenancy_request.pk} (new namespace) for payments " in message.body
    assert "cpu: 1 core\n" in message.body and "memory: 2 GiB\n" in message.body
    assert "cpu_millis" not in message.body and "memory_mib" not in message.body
    assert f"/requests/{tenancy_request.pk}/" in message.body
    if tenancy_request.status_message:
        assert tenancy_request.status_message in message.body

    [hook] = [
        json.loads(body)
        for _, body in Receiver.deliveries
        if json.loads(body)["event"] == f"request.{event}"
    ]
    assert hook["request"] == {
        "id": tenancy_request.pk,
        "tenant": "payments",
        "kind": "namespace",
        "state": tenancy_request.state,
        "payload": tenancy_request.payload,
        "requester": "dev",
        "message": tenancy_request.status_message,
        "url": f"{settings.BERTH_BASE_URL}/requests/{tenancy_request.pk}/",
    }


def test_a_request_approved_by_policy_tells_its_requester_once_that_it_was_approved(
    world, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(world, tier="dev")  # dev is approved automatically
    to_developer = [m.subject for m in mail.outbox if "dev@example.com" in m.to]
    assert f"[Berth] payments: request #{tenancy_request.pk} approved" in to_developer
    assert not [s for s in to_developer if s.endswith("submitted")], to_developer


@pytest.mark.parametrize(
    ("event", "state", "mailed"),
    [
        ("submitted", "submitted", True),  # held for a decision
        ("submitted", "approved", False),  # approved by policy: CI has the API's answer
        ("approved", "approved", False),
        ("returned", "submitted", True),
        ("cancelled", "cancelled", True),
        ("retried", "provisioning", False),
        ("ready", "ready", True),
        ("failed", "failed", True),
        ("decommissioning", "decommissioning", False),  # expiry ends review apps by the dozen
        ("decommissioned", "decommissioned", False),
    ],
)
def test_review_apps_mail_only_what_someone_must_act_on(event, state, mailed):
    from tenants.notifications import wants_email

    assert wants_email(Request(kind="ephemeral", state=state), event) is mailed
    assert wants_email(Request(kind="namespace", state=state), event)  # others: always


def test_a_muted_expiry_warning_spares_that_owner_only(world):
    from tenants.models import EphemeralEnvironment, Project
    from tenants.notifications import environment_recipients

    Project.objects.create(tenant=world["tenant"], name="shop")
    services.submit_request(
        tenant=world["tenant"],
        kind="ephemeral",
        requester=world["developer"],
        payload={"project": "shop", "env_slug": "review-1"},
    )
    environment = EphemeralEnvironment.objects.get(slug="review-1")
    owner = User.objects.get(username="olivia")
    assert environment_recipients(environment) == ["dev@example.com", "olivia@example.com"]

    services.set_muted_notifications(user=owner, muted=["expiring"])
    owner.refresh_from_db()
    assert environment_recipients(environment) == ["dev@example.com"]


def test_the_form_keeps_what_is_unticked_and_refuses_unknown_events(world):
    from tenants.forms import NotificationsForm

    form = NotificationsForm.for_user(world["developer"], {"wanted": ["ready", "failed"]})
    assert form.is_valid()
    assert "ready" not in form.muted() and "failed" not in form.muted()
    assert {"submitted", "approved", "expiring"} <= set(form.muted())

    refused = NotificationsForm.for_user(world["developer"], {"wanted": ["ready", "lunch"]})
    assert not refused.is_valid()
    assert "lunch" in refused.errors["wanted"][0]

    services.set_muted_notifications(user=world["developer"], muted=["approved"])
    unticked = NotificationsForm.for_user(world["developer"]).initial["wanted"]
    assert "approved" not in unticked and "ready" in unticked
