"""Each event's e-mail and webhook, as people and receivers read them: what was asked, in
people's units, and a link; a request approved by policy told once; review apps mail only
what someone must act on."""

import json

import pytest
from django.conf import settings
from django.core import mail

from tenants import services
from tenants.models import Request, Tenant
from tenants.services.lifecycle import transition
from tests.support.tenants_notifications import Receiver, submit

# --- each new event's e-mail and webhook, as people and receivers read them ------------------

ASKED = {"app": "shop", "tier": "prod", "cluster": "sandbox", "cpu": "1", "memory": "2Gi"}


def in_state(state: str):
    return lambda demo_world, tenancy_request: Request.objects.filter(pk=tenancy_request.pk).update(
        state=state
    )


# How each event comes about for a submitted prod namespace request, step by step.
BRING_ABOUT = {
    "cancelled": [
        lambda demo_world, r: services.cancel_request(
            request_id=r.pk, actor=demo_world["developer"]
        )
    ],
    "returned": [
        in_state("approved"),
        lambda demo_world, r: services.return_to_approval(
            request_id=r.pk, reason="The prod tier's quota defaults changed."
        ),
    ],
    "retried": [
        in_state("failed"),
        lambda demo_world, r: transition(
            request_id=r.pk, action="retry", actor=demo_world["admin"]
        ),
    ],
    "decommissioning": [
        in_state("ready"),
        lambda demo_world, r: services.start_decommission(
            request_id=r.pk, actor=None, reason="Decommission requested in #9."
        ),
    ],
    "decommissioned": [
        in_state("decommissioning"),
        lambda demo_world, r: services.mark_decommissioned(request_id=r.pk),
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
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks, event
):
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(webhook_url=receiver)
    tenancy_request = services.submit_request(
        tenant=demo_world["tenant"],
        kind="namespace",
        requester=demo_world["developer"],
        payload=ASKED,
    )
    mail.outbox.clear()
    Receiver.deliveries.clear()
    for step in BRING_ABOUT[event]:
        with django_capture_on_commit_callbacks(execute=True):
            step(demo_world, tenancy_request)

    tenancy_request.refresh_from_db()
    [message] = [
        m
        for m in mail.outbox
        if m.subject == f"[Berth] payments: request #{tenancy_request.pk} {SUBJECT_WORDS[event]}"
    ]
    assert f"Request #{tenancy_request.pk} (new namespace) for payments " in message.body
    assert "cpu: 1 core\n" in message.body and "memory: 2Gi\n" in message.body
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
    demo_world, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(demo_world, tier="dev")  # dev is approved automatically
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
