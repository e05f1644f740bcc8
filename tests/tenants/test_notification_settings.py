"""Each person's opt-out of notifications: a muted event is not mailed to them but to the
others and the webhook; the settings page and its form save the choice (audited) and
refuse unknown events."""

import json

import pytest

from tenants import services
from tenants.models import Tenant, User
from tests.support.tenants_notifications import Receiver, outbox_for, submit
from tests.support.workflow import ask_for_environment


def test_a_person_who_muted_an_event_is_not_mailed_it_but_others_and_webhooks_are(
    demo_world, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(
        webhook_url=receiver, notify_emails=["payments-team@example.com"]
    )
    services.set_muted_notifications(user=demo_world["admin"], muted=["submitted"])
    with django_capture_on_commit_callbacks(execute=True):
        tenancy_request = submit(demo_world)
    [message] = outbox_for("submitted")
    assert message.to == ["payments-team@example.com"]  # not pat, who muted it
    assert [json.loads(body)["event"] for _, body in Receiver.deliveries] == ["request.submitted"]

    with django_capture_on_commit_callbacks(execute=True):
        services.cancel_request(request_id=tenancy_request.pk, actor=demo_world["developer"])
    assert "pat@example.com" in outbox_for("cancelled")[0].to  # only what was muted


def test_unknown_events_cannot_be_muted(demo_world):
    from tenants.errors import InvalidInput

    with pytest.raises(InvalidInput) as error:
        services.set_muted_notifications(user=demo_world["developer"], muted=["ready", "lunch"])
    assert "lunch" in str(error.value.field_errors)
    demo_world["developer"].refresh_from_db()
    assert demo_world["developer"].muted_notifications == []


def test_notifications_page_saves_the_choice_and_audits_it(client, demo_world):
    from tenants.models import AuditEvent

    client.force_login(demo_world["developer"])
    page = client.get("/settings/notifications/").content.decode()
    assert page.count('type="checkbox"') == 12 and page.count("checked") == 12

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
        "unmerged",
        "expiring",
    ]
    response = client.post("/settings/notifications/", {"wanted": wanted}, follow=True)

    assert "you are not e-mailed about 1 kind of event" in response.content.decode()
    demo_world["developer"].refresh_from_db()
    assert demo_world["developer"].muted_notifications == ["ready"]
    assert AuditEvent.objects.get(action="user.notifications").after == {"muted": ["ready"]}
    bad = client.post("/settings/notifications/", {"wanted": ["lunch"]})
    assert bad.status_code == 200 and "lunch is not one of the available choices" in (
        bad.content.decode().replace("&quot;", "")
    )
    demo_world["developer"].refresh_from_db()
    assert demo_world["developer"].muted_notifications == ["ready"]


def test_a_muted_expiry_warning_spares_that_owner_only(demo_world):
    from tenants.models import EphemeralEnvironment, Project
    from tenants.notifications import environment_recipients

    Project.objects.create(tenant=demo_world["tenant"], name="shop")
    ask_for_environment(
        demo_world["tenant"], demo_world["developer"], project="shop", env_slug="review-1"
    )
    environment = EphemeralEnvironment.objects.get(slug="review-1")
    owner = User.objects.get(username="olivia")
    assert environment_recipients(environment) == ["dev@example.com", "olivia@example.com"]

    services.set_muted_notifications(user=owner, muted=["expiring"])
    owner.refresh_from_db()
    assert environment_recipients(environment) == ["dev@example.com"]


def test_the_form_keeps_what_is_unticked_and_refuses_unknown_events(demo_world):
    from tenants.forms import NotificationsForm

    form = NotificationsForm.for_user(demo_world["developer"], {"wanted": ["ready", "failed"]})
    assert form.is_valid()
    assert "ready" not in form.muted() and "failed" not in form.muted()
    assert {"submitted", "approved", "expiring"} <= set(form.muted())

    refused = NotificationsForm.for_user(demo_world["developer"], {"wanted": ["ready", "lunch"]})
    assert not refused.is_valid()
    assert "lunch" in refused.errors["wanted"][0]

    services.set_muted_notifications(user=demo_world["developer"], muted=["approved"])
    unticked = NotificationsForm.for_user(demo_world["developer"]).initial["wanted"]
    assert "approved" not in unticked and "ready" in unticked
