"""A person's notification opt-out over the API: read and changed on /api/v1/me/."""

from __future__ import annotations

from tenants.models import AuditEvent
from tests.support.api import api, assert_problem

ME = "/api/v1/me/"


def test_me_shows_the_events_a_person_is_not_emailed(api_world):
    assert api(api_world.member, scopes=["read"]).get(ME).json()["muted_notifications"] == []


def test_a_person_mutes_events_with_a_patch_and_it_is_audited(api_world):
    response = api(api_world.member).patch(
        ME, {"muted_notifications": ["ready", "approved"]}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["muted_notifications"] == ["approved", "ready"]
    api_world.member.refresh_from_db()
    assert api_world.member.muted_notifications == ["approved", "ready"]
    event = AuditEvent.objects.get(action="user.notifications")
    assert event.actor == api_world.member and event.after == {"muted": ["approved", "ready"]}


def test_a_patch_without_the_field_changes_nothing(api_world):
    api_world.member.muted_notifications = ["failed"]
    api_world.member.save()
    response = api(api_world.member).patch(ME, {}, format="json")
    assert response.status_code == 200 and response.json()["muted_notifications"] == ["failed"]
    assert not AuditEvent.objects.filter(action="user.notifications").exists()


def test_unknown_events_are_refused_and_nothing_is_saved(api_world):
    body = assert_problem(
        api(api_world.member).patch(ME, {"muted_notifications": ["ready", "lunch"]}, format="json"),
        400,
    )
    assert body["errors"] == {
        "muted_notifications.1": [
            '"lunch" is not an event; the events: submitted, approved, rejected, cancelled, '
            "returned, retried, ready, failed, decommissioning, decommissioned, unmerged, expiring."
        ]
    }
    api_world.member.refresh_from_db()
    assert api_world.member.muted_notifications == []


def test_a_read_only_token_cannot_change_settings(api_world):
    assert_problem(
        api(api_world.member, scopes=["read"]).patch(
            ME, {"muted_notifications": ["ready"]}, format="json"
        ),
        403,
    )
    api_world.member.refresh_from_db()
    assert api_world.member.muted_notifications == []
