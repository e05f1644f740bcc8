"""Notifications: e-mail to whoever must act or asked, and a signed, retried webhook; every
state a person waits on tells them."""

import hashlib
import hmac
import json

import pytest
from django.core import mail

from tenants import services
from tenants.models import Request, Tenant
from tenants.services.lifecycle import transition
from tests.support.tenants_notifications import Receiver, hooked_request_in, outbox_for, submit
from tests.support.workflow import approve_if_needed, ask_for_environment


def test_submission_mails_the_approvers_and_approval_mails_the_requester(
    demo_world, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(demo_world)
    assert mail.outbox[-1].to == ["pat@example.com"]
    assert f"request #{tenancy_request.pk} submitted" in mail.outbox[-1].subject

    with django_capture_on_commit_callbacks(execute=True):
        approve_if_needed(tenancy_request, approver=demo_world["admin"])
    # Eager tasks also provision at once: nothing listens at the cluster URL, so it fails.
    by_subject = {message.subject.rsplit(" ", 1)[-1]: message for message in mail.outbox}
    assert by_subject["approved"].to == ["dev@example.com"]
    assert f"/requests/{tenancy_request.pk}/" in by_subject["approved"].body
    assert by_subject["failed"].to == ["dev@example.com"]
    assert "cluster unreachable" in by_subject["failed"].body


def test_webhook_is_signed_and_retried_until_the_receiver_accepts(
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(webhook_url=receiver)
    tenant = Tenant.objects.get(pk=demo_world["tenant"].pk)
    tenant.webhook_secret = "hook-secret"
    tenant.save()
    Receiver.failures = 2

    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(demo_world)

    assert len(Receiver.deliveries) == 3  # two 503s, then accepted
    headers, body = Receiver.deliveries[-1]
    expected = "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
    assert headers["X-Berth-Signature"] == expected
    event = json.loads(body)
    assert event["event"] == "request.submitted"
    assert event["request"]["id"] == tenancy_request.pk
    assert event["request"]["tenant"] == "payments"


def test_no_webhook_configured_sends_nothing(
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        submit(demo_world)
    assert Receiver.deliveries == []


def test_review_apps_mail_nobody_on_the_way_but_webhooks_hear_everything(
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    from tenants.models import Project

    Project.objects.create(tenant=demo_world["tenant"], name="shop")
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(webhook_url=receiver)
    with django_capture_on_commit_callbacks(execute=True):
        ask_for_environment(
            demo_world["tenant"], demo_world["developer"], project="shop", env_slug="review-1"
        )
    # Auto-approved, then (eagerly) provisioned against no cluster: only the failure mails.
    subjects = [message.subject for message in mail.outbox]
    assert not [s for s in subjects if s.endswith(("submitted", "approved"))], subjects
    assert [s for s in subjects if s.endswith("failed")]
    events = [json.loads(body)["event"] for _, body in Receiver.deliveries]
    assert {"request.submitted", "request.approved"} <= set(events)


# --- every state a person waits on, and each person's opt-out ---------------------------------


def test_submission_mail_shows_what_was_asked_for_in_people_units(
    demo_world, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        submit(demo_world)
    body = mail.outbox[-1].body
    assert "cpu: 1 core\n" in body and "memory: 1Gi\n" in body and "app: shop\n" in body
    assert "cpu_millis" not in body and "memory_mib" not in body


@pytest.mark.parametrize(
    ("who", "told"),
    [
        ("developer", ["pat@example.com"]),  # the requester withdrew it: the approver hears
        ("admin", ["dev@example.com"]),  # the admin cancelled it: the requester hears
    ],
)
def test_cancel_tells_whoever_waited_on_it_but_not_the_one_who_cancelled(
    demo_world, eager_tasks, django_capture_on_commit_callbacks, who, told
):
    tenancy_request = submit(demo_world)
    with django_capture_on_commit_callbacks(execute=True):
        services.cancel_request(request_id=tenancy_request.pk, actor=demo_world[who])
    [message] = outbox_for("cancelled")
    assert message.to == told
    assert f"Request #{tenancy_request.pk}" in message.body and "was cancelled" in message.body


def test_return_to_approval_tells_requester_and_approvers(
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    tenancy_request = hooked_request_in(demo_world, receiver, "approved")
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
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    tenancy_request = hooked_request_in(demo_world, receiver, "ready")
    with django_capture_on_commit_callbacks(execute=True):
        services.start_decommission(
            request_id=tenancy_request.pk,
            actor=demo_world["admin"],
            reason="Decommission requested in #9.",
        )
        services.mark_decommissioned(request_id=tenancy_request.pk)
    Request.objects.filter(pk=tenancy_request.pk).update(state="failed")
    with django_capture_on_commit_callbacks(execute=True):
        transition(request_id=tenancy_request.pk, action="retry", actor=demo_world["admin"])

    for words in ("being decommissioned", "decommissioned", "being provisioned again"):
        messages = outbox_for(words)
        assert messages and messages[0].to == ["dev@example.com"], words
    events = {json.loads(body)["event"] for _, body in Receiver.deliveries}
    assert {"request.decommissioning", "request.decommissioned", "request.retried"} <= events
