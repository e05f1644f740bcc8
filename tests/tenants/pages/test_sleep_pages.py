"""A namespace's sleep on the pages: its section (asleep or awake and until when, its
schedule in words, kube-green or Berth carrying it out), "Wake now" for its tenant's owners
and members and platform admins only (a viewer is refused, an outsider sees nothing of it),
hours out of bounds refused with nothing changed, asking for another schedule (field errors
on the form, a request of kind "sleep" once it is right), the tenant page's list and the
admin dashboard's count."""

from datetime import time, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.choices import NamespaceState, RequestKind, RequestState, Role, SleepMode
from tenants.models import AuditEvent, Cluster, EnvironmentTier, Membership, Namespace, Request
from tests.support.factories import UserFactory
from tests.support.sleep_schedules import ROME_NEXT_WAKE, ROME_NIGHT, rome_evenings

NOW = ROME_NIGHT
NEXT_WAKE = ROME_NEXT_WAKE


@pytest.fixture(autouse=True)
def clock():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def sleepy_tier(demo_world) -> EnvironmentTier:
    return rome_evenings()


def live(demo_world, name: str = "payments-shop-dev", **fields) -> Namespace:
    return Namespace.objects.create(
        name=name,
        tenant=demo_world["tenant"],
        tier=EnvironmentTier.objects.get(slug="dev"),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
        **fields,
    )


@pytest.fixture
def asleep(demo_world, sleepy_tier) -> Namespace:
    return live(demo_world, asleep=True, slept_at=NOW - timedelta(hours=2))


@pytest.fixture
def viewer(demo_world):
    person = UserFactory(username="vic")
    Membership.objects.create(user=person, tenant=demo_world["tenant"], role=Role.VIEWER)
    return person


def page_of(client, namespace: Namespace) -> str:
    response = client.get(f"/namespaces/{namespace.pk}/")
    assert response.status_code == 200
    return response.content.decode()


# --- the section -----------------------------------------------------------------------------


def test_an_asleep_namespace_says_until_when_its_schedule_and_who_carries_it_out(
    client, demo_world, asleep
):
    client.force_login(demo_world["developer"])
    page = page_of(client, asleep)
    assert 'id="sleep"' in page and 'data-sleep="asleep"' in page
    assert f'datetime="{NEXT_WAKE.isoformat()}"' in page  # until its next wake
    assert "Wed 2026-03-18 07:00</time> UTC" in page and "(Wed 08:00 Europe/Rome)" in page
    assert 'As its tier says</strong> <span class="muted">(dev)</span>' in page
    assert (
        "Goes to sleep at 20:00 and wakes at 08:00, Monday to Friday (Europe/Rome time); "
        "asleep through the other days." in page
    )
    assert "<strong>Berth</strong>: its Deployments and StatefulSets go to zero" in page
    assert "Asleep since" in page
    assert 'id="wake-now"' in page and ">Wake now</button>" in page
    assert 'max="12"' in page  # the tier's longest wake, as the browser's hint

    Cluster.objects.filter(name="sandbox").update(has_kube_green=True)
    assert "<strong>kube-green</strong> on sandbox" in page_of(client, asleep)


def test_a_namespace_of_its_own_schedule_or_none_says_so(client, demo_world, sleepy_tier):
    own = live(
        demo_world,
        sleep_mode=SleepMode.CUSTOM,
        sleep_weekdays="0,6",
        sleep_at=time(1, 0),
        wake_at=time(7, 0),
    )
    never = live(demo_world, "payments-db-dev", sleep_mode=SleepMode.NEVER)
    client.force_login(demo_world["owner"])
    page = page_of(client, own)
    assert (
        "<strong>Its own</strong>: Goes to sleep at 01:00 and wakes at 07:00, Saturday and " in page
    )
    assert "Sunday (UTC time); awake on the other days." in page
    assert 'data-sleep="awake"' in page and ">Keep awake</button>" in page
    page = page_of(client, never)
    assert 'data-sleep="never sleeps"' in page and "it never sleeps, whatever its tier says" in page
    assert 'id="wake-now"' not in page


def test_a_namespace_of_an_idle_sleeping_tier_says_when_it_sleeps(client, demo_world):
    EnvironmentTier.objects.filter(slug="dev").update(sleep_after_idle_hours=4)
    idle = live(demo_world, asleep=True, slept_at=NOW - timedelta(hours=1))
    Namespace.objects.filter(pk=idle.pk).update(created_at=NOW - timedelta(hours=5))
    client.force_login(demo_world["developer"])
    page = page_of(client, idle)
    assert 'data-sleep="asleep"' in page and "until its next deploy" in page
    assert "Sleeps once 4 hours pass without a deploy (a deploy token minted for it)" in page
    assert "<strong>Berth</strong>: its Deployments" in page and 'id="wake-now"' in page
    assert "(dev: after 4 hours without a deploy)" in page


def test_a_namespace_that_is_not_live_has_no_sleep_section(client, demo_world, sleepy_tier):
    namespace = live(demo_world)
    Namespace.objects.filter(pk=namespace.pk).update(state=NamespaceState.PENDING)
    client.force_login(demo_world["developer"])
    assert 'id="sleep"' not in page_of(client, namespace)
    assert client.post(f"/namespaces/{namespace.pk}/sleep/", {"mode": "never"}).status_code == 302
    assert not Request.objects.filter(kind=RequestKind.SLEEP).exists()


# --- who may wake it -------------------------------------------------------------------------


def test_owners_members_and_platform_admins_see_wake_now_and_a_viewer_does_not(
    client, demo_world, asleep, viewer
):
    for person in ("developer", "owner", "admin"):
        client.force_login(demo_world[person])
        assert 'id="wake-now"' in page_of(client, asleep), person
    client.force_login(viewer)
    page = page_of(client, asleep)
    assert 'data-sleep="asleep"' in page and 'id="wake-now"' not in page
    assert "may wake it on demand" in page

    assert client.post(f"/namespaces/{asleep.pk}/wake/", {"hours": "2"}).status_code == 403
    asleep.refresh_from_db()
    assert asleep.awake_until is None
    assert not AuditEvent.objects.filter(action="namespace.woken").exists()


def test_an_outsider_sees_nothing_of_another_tenants_sleep_and_cannot_wake_it(
    client, demo_world, asleep
):
    client.force_login(demo_world["outsider"])
    assert client.get(f"/namespaces/{asleep.pk}/").status_code == 404
    assert client.post(f"/namespaces/{asleep.pk}/wake/").status_code == 404
    assert client.get(f"/namespaces/{asleep.pk}/sleep/").status_code == 404
    assert client.post(f"/namespaces/{asleep.pk}/sleep/", {"mode": "never"}).status_code == 404
    page = client.get("/tenants/search/").content.decode()
    assert asleep.name not in page
    asleep.refresh_from_db()
    assert asleep.awake_until is None and not Request.objects.filter(kind=RequestKind.SLEEP)


def test_waking_for_hours_keeps_it_awake_until_then_and_is_audited(client, demo_world, asleep):
    client.force_login(demo_world["developer"])
    response = client.post(f"/namespaces/{asleep.pk}/wake/", {"hours": "2"}, follow=True)
    assert response.redirect_chain[-1][0] == f"/namespaces/{asleep.pk}/#sleep"
    page = response.content.decode()
    assert "stays awake until 2026-03-18 00:00 UTC: its workloads come back" in page
    asleep.refresh_from_db()
    assert asleep.awake_until == NOW + timedelta(hours=2)
    # The cluster still holds it asleep until the engine wakes it: the page says so.
    assert "<strong>waking</strong>" in page and "woken on demand" in page
    event = AuditEvent.objects.get(action="namespace.woken")
    assert event.actor == demo_world["developer"]


def test_hours_out_of_bounds_are_refused_and_nothing_changes(client, demo_world, asleep):
    client.force_login(demo_world["owner"])
    for hours, said in (
        ("13", "Not woken: A wake of a dev namespace lasts 1 to 12 hours."),
        ("0", "Not woken: A wake of a dev namespace lasts 1 to 12 hours."),
        ("soon", "Not woken: Enter a whole number."),
    ):
        response = client.post(f"/namespaces/{asleep.pk}/wake/", {"hours": hours}, follow=True)
        assert said in response.content.decode(), hours
    asleep.refresh_from_db()
    assert asleep.awake_until is None
    assert not AuditEvent.objects.filter(action="namespace.woken").exists()


def test_a_namespace_that_never_sleeps_is_not_woken(client, demo_world, sleepy_tier):
    never = live(demo_world, sleep_mode=SleepMode.NEVER)
    client.force_login(demo_world["owner"])
    response = client.post(f"/namespaces/{never.pk}/wake/", follow=True)
    assert "has no sleep schedule: it is always awake." in response.content.decode()
    never.refresh_from_db()
    assert never.awake_until is None


# --- asking for another schedule -------------------------------------------------------------


def test_a_schedule_with_mistakes_is_shown_again_with_them_and_nothing_is_asked(
    client, demo_world, asleep
):
    client.force_login(demo_world["owner"])
    assert 'id="sleep-schedule-form"' in page_of(client, asleep)
    response = client.post(
        f"/namespaces/{asleep.pk}/sleep/",
        {
            "mode": "custom",
            "sleep_weekdays": "5-1",
            "sleep_at": "19:00",
            "wake_at": "07:30",
            "sleep_time_zone": "Mars/Olympus",
        },
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "runs backwards: write the smaller day first." in page
    assert "Mars/Olympus&quot; is not an IANA time zone" in page
    assert 'value="19:00"' in page and 'value="5-1"' in page  # nothing lost
    assert not Request.objects.filter(kind=RequestKind.SLEEP).exists()

    response = client.post(f"/namespaces/{asleep.pk}/sleep/", {"mode": "custom"})
    assert "A schedule of its own needs its days" in response.content.decode()
    assert not Request.objects.filter(kind=RequestKind.SLEEP).exists()


def test_an_owner_asks_for_a_schedule_of_its_own_and_goes_to_the_request(
    client, demo_world, asleep
):
    client.force_login(demo_world["owner"])
    response = client.post(
        f"/namespaces/{asleep.pk}/sleep/",
        {
            "mode": "custom",
            "sleep_weekdays": "1-5",
            "sleep_at": "19:00",
            "wake_at": "07:30",
            "sleep_time_zone": "Europe/Rome",
        },
    )
    asked = Request.objects.get(kind=RequestKind.SLEEP)
    assert response.status_code == 302 and response["Location"] == f"/requests/{asked.pk}/"
    assert asked.payload | {"cluster": "sandbox"} == {
        "namespace": asleep.name,
        "mode": "custom",
        "sleep_weekdays": "1-5",
        "sleep_at": "19:00",
        "wake_at": "07:30",
        "sleep_time_zone": "Europe/Rome",
        "cluster": "sandbox",
    }
    assert asked.requester == demo_world["owner"]
    # An owner within what the tier allows: the default rules approve it at once.
    assert asked.state != RequestState.SUBMITTED


def test_a_member_asking_to_never_sleep_waits_for_a_platform_admin(client, demo_world, asleep):
    client.force_login(demo_world["developer"])
    response = client.post(f"/namespaces/{asleep.pk}/sleep/", {"mode": "never"}, follow=True)
    asked = Request.objects.get(kind=RequestKind.SLEEP)
    assert response.redirect_chain[-1][0] == f"/requests/{asked.pk}/"
    assert asked.state == RequestState.SUBMITTED
    assert asked.payload["mode"] == "never"
    page = response.content.decode()
    assert "sleep schedule (never sleeps): request" in page
    assert f"request #{asked.pk} is awaiting approval" in page


# --- the lists and the dashboard -------------------------------------------------------------


def test_the_tenant_page_lists_each_namespace_asleep_or_awake_in_fixed_queries(
    client, demo_world, asleep
):
    live(demo_world, "payments-db-dev", sleep_mode=SleepMode.NEVER)
    client.force_login(demo_world["developer"])

    def queries() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as captured:
            page = client.get("/tenants/payments/").content.decode()
        return len(captured), page

    few, page = queries()
    cell = page.split(f'data-namespace-sleep="{asleep.name}">')[1].split("</td>")[0]
    assert 'data-sleep="asleep"' in cell and "until" in cell and "Wed 07:00" in cell
    assert 'data-sleep="never"' in page.split('data-namespace-sleep="payments-db-dev">')[1]
    for index in range(6):
        live(demo_world, f"payments-a{index}-dev", asleep=index % 2 == 0)
    many, page = queries()
    assert page.count('data-sleep="asleep"') == 4
    assert many == few, (few, many)


def test_the_dashboard_counts_the_namespaces_asleep_now(client, demo_world, asleep):
    live(demo_world, "payments-db-dev")
    gone = live(demo_world, "payments-old-dev", asleep=True)
    Namespace.objects.filter(pk=gone.pk).update(state=NamespaceState.DECOMMISSIONED)
    client.force_login(demo_world["admin"])
    page = client.get("/dashboard/").content.decode()
    section = page.split('id="asleep-now"')[1].split("</section>")[0]
    assert "<strong>1</strong> of 2 live namespaces is asleep on its cluster now" in section
