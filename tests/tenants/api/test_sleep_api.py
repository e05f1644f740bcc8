"""A namespace's sleep over the API: its `sleep` object on GET; POST
/api/v1/namespaces/<name>/wake/ for its tenant's owners and members and platform admins
(a viewer 403, an outsider 404, hours out of bounds 400 on `hours`, no schedule 409, a
token without the request scope 403), nothing changed when refused; and a new schedule asked
through POST /api/v1/requests/ as a request of kind "sleep". (What the cluster does: the
engine's tests.)"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from tenants.choices import RequestKind, RequestState, SleepMode
from tenants.models import AuditEvent, Cluster, EnvironmentTier, Namespace, Request
from tests.support.api import api, assert_problem
from tests.support.sleep_schedules import ROME_NEXT_WAKE, ROME_NIGHT, rome_evenings
from tests.tenants.api.test_deploy_tokens import live_namespace

pytestmark = pytest.mark.django_db

NOW = ROME_NIGHT
NEXT_WAKE = ROME_NEXT_WAKE
NAME = "payments-shop-dev"


@pytest.fixture(autouse=True)
def clock():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def dev(api_world) -> Namespace:
    rome_evenings()
    made = live_namespace(api_world, "dev", NAME)
    Namespace.objects.filter(pk=made.pk).update(asleep=True, slept_at=NOW - timedelta(hours=2))
    return Namespace.objects.get(pk=made.pk)


def wake(user, name: str = NAME, scopes=None, **body):
    client = api(user) if scopes is None else api(user, scopes=scopes)
    return client.post(f"/api/v1/namespaces/{name}/wake/", body, format="json")


def nothing_changed(namespace: Namespace) -> None:
    namespace.refresh_from_db()
    assert namespace.awake_until is None
    assert not AuditEvent.objects.filter(action="namespace.woken").exists()


def test_a_namespace_says_its_sleep(api_world, dev):
    body = api(api_world.member).get(f"/api/v1/namespaces/{dev.pk}/").json()
    assert body["sleep"] == {
        "mode": "tier",
        "schedule": {
            "weekdays": "1-5",
            "sleep_at": "20:00",
            "wake_at": "08:00",
            "time_zone": "Europe/Rome",
        },
        "asleep": True,
        "awake_until": None,
        "next_change": "2026-03-18T07:00:00Z",
        "idle_hours": None,
        "by": "berth",
    }
    Cluster.objects.filter(name="sandbox").update(has_kube_green=True)
    again = api(api_world.member).get(f"/api/v1/namespaces/{dev.pk}/").json()["sleep"]
    assert again["by"] == "kube-green"
    Namespace.objects.filter(pk=dev.pk).update(sleep_mode=SleepMode.NEVER, asleep=False)
    listed = api(api_world.member).get("/api/v1/namespaces/", {"tenant": "payments"}).json()
    row = next(row for row in listed["results"] if row["name"] == NAME)
    assert row["sleep"] == {
        "mode": "never",
        "schedule": None,
        "asleep": False,
        "awake_until": None,
        "next_change": None,
        "idle_hours": None,
        "by": None,
    }


def test_a_namespace_of_an_idle_sleeping_tier_says_so_and_wakes(api_world, dev):
    EnvironmentTier.objects.filter(slug="dev").update(
        sleep_weekdays="", sleep_at=None, wake_at=None, sleep_after_idle_hours=4
    )
    sleep = api(api_world.member).get(f"/api/v1/namespaces/{dev.pk}/").json()["sleep"]
    assert sleep["schedule"] is None and sleep["idle_hours"] == 4
    assert sleep["asleep"] is True and sleep["by"] == "berth"
    woken = wake(api_world.member, hours=2)
    assert woken.status_code == 200, woken.content
    assert woken.json()["awake_until"] == "2026-03-18T00:00:00Z"


@pytest.mark.parametrize("who", ["member", "owner", "admin"])
def test_owners_members_and_platform_admins_wake_it_for_hours(api_world, dev, who):
    response = wake(getattr(api_world, who), hours=2)

    assert response.status_code == 200, response.content
    assert response.json() == {
        "id": dev.pk,
        "namespace": NAME,
        "cluster": "sandbox",
        "awake_until": "2026-03-18T00:00:00Z",
        "asleep": True,  # until the engine has its workloads back
    }
    dev.refresh_from_db()
    assert dev.awake_until == NOW + timedelta(hours=2)
    event = AuditEvent.objects.get(action="namespace.woken")
    assert event.actor == getattr(api_world, who)
    after = api(api_world.member).get(f"/api/v1/namespaces/{dev.pk}/").json()["sleep"]
    assert after["awake_until"] == "2026-03-18T00:00:00Z"
    assert after["next_change"] == "2026-03-18T00:00:00Z"


def test_without_hours_it_wakes_for_the_tiers_longest_and_never_past_its_next_sleep(api_world, dev):
    response = wake(api_world.member)  # no body at all
    assert response.status_code == 200, response.content
    assert response.json()["awake_until"] == "2026-03-18T10:00:00Z"  # 12 hours
    EnvironmentTier.objects.filter(slug="dev").update(wake_max_hours=48)
    answer = wake(api_world.member, str(dev.pk), hours=48).json()  # by its id too
    assert answer["awake_until"] == "2026-03-18T19:00:00Z"  # Wednesday 20:00 in Rome


def test_a_viewer_is_refused_and_nothing_changes(api_world, dev):
    body = assert_problem(wake(api_world.viewer, hours=1), 403, "forbidden")
    assert "owners and members" in body["detail"]
    nothing_changed(dev)


def test_an_outsider_finds_no_such_namespace_nor_its_sleep(api_world, dev):
    assert_problem(wake(api_world.outsider, hours=1), 404, "not-found")
    assert_problem(wake(api_world.outsider, str(dev.pk)), 404, "not-found")
    assert_problem(api(api_world.outsider).get(f"/api/v1/namespaces/{dev.pk}/"), 404)
    nothing_changed(dev)


@pytest.mark.parametrize("hours", [0, 13, -1])
def test_hours_out_of_bounds_are_a_400_on_hours(api_world, dev, hours):
    body = assert_problem(wake(api_world.owner, hours=hours), 400, "validation-error")
    assert body["errors"]["hours"] == ["A wake of a dev namespace lasts 1 to 12 hours."]
    nothing_changed(dev)


def test_hours_that_are_not_a_number_are_a_400(api_world, dev):
    body = assert_problem(wake(api_world.owner, hours="soon"), 400, "validation-error")
    assert "hours" in body["errors"]
    nothing_changed(dev)


def test_a_namespace_that_never_sleeps_is_a_conflict(api_world, dev):
    Namespace.objects.filter(pk=dev.pk).update(sleep_mode=SleepMode.NEVER)
    body = assert_problem(wake(api_world.owner), 409)
    assert "has no sleep schedule" in body["detail"]
    nothing_changed(dev)


def test_waking_takes_a_token_with_the_request_scope(api_world, dev):
    body = assert_problem(wake(api_world.owner, scopes=["read"]), 403, "forbidden")
    assert "scope" in body["detail"]
    nothing_changed(dev)
    assert wake(api_world.owner, scopes=["request"]).status_code == 200


def test_a_new_schedule_is_a_request_of_kind_sleep(api_world, dev):
    schedule = {
        "namespace": NAME,
        "mode": "custom",
        "sleep_weekdays": "1-5",
        "sleep_at": "19:00",
        "wake_at": "07:30",
        "sleep_time_zone": "Europe/Rome",
    }
    response = api(api_world.owner).post(
        "/api/v1/requests/",
        {"tenant": "payments", "kind": "sleep", "payload": schedule},
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["kind"] == "sleep"
    assert body["payload"] == {**schedule, "cluster": "sandbox"}
    # An owner within what the dev tier lets owners set: the default rules approve it.
    assert body["state"] != RequestState.SUBMITTED
    assert Request.objects.get(pk=body["id"]).kind == RequestKind.SLEEP


def test_a_schedule_with_mistakes_is_a_400_by_payload_field(api_world, dev):
    response = api(api_world.owner).post(
        "/api/v1/requests/",
        {
            "tenant": "payments",
            "kind": "sleep",
            "payload": {
                "namespace": NAME,
                "mode": "custom",
                "sleep_weekdays": "8",
                "sleep_at": "19:00",
                "wake_at": "07:00",
            },
        },
        format="json",
    )
    body = assert_problem(response, 400, "validation-error")
    assert "payload.sleep_weekdays" in body["errors"], body["errors"]
    assert not Request.objects.filter(kind=RequestKind.SLEEP).exists()
