"""A tier's hibernation in the admin site: its fields in a fieldset of their own, checked as
the model checks them; a changed schedule has the tier's live namespaces that follow it
settled once the change is saved (the engine hears namespace_sleep_changed after the
commit), and nothing else is settled."""

from __future__ import annotations

from datetime import time
from unittest import mock

import pytest

from tenants.choices import NamespaceState, SleepMode
from tenants.models import Cluster, EnvironmentTier, Namespace
from tenants.signals import namespace_sleep_changed


@pytest.fixture
def staff(demo_world):
    person = demo_world["admin"]
    person.is_staff = person.is_superuser = True  # Django's admin is for staff
    person.save()
    return person


@pytest.fixture
def settled():
    """The namespaces the engine is told to settle, in order (the engine itself not asked)."""
    told: list[tuple[int, str]] = []

    def hear(sender, *, namespace_id: int, actor: str, **_: object) -> None:
        told.append((namespace_id, actor))

    with mock.patch.object(namespace_sleep_changed, "receivers", []):
        namespace_sleep_changed.connect(hear, sender=Namespace, weak=False)
        yield told


def namespace(demo_world, name: str, tier: str = "dev", **fields) -> Namespace:
    return Namespace.objects.create(
        name=name,
        tenant=demo_world["tenant"],
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=fields.pop("state", NamespaceState.ACTIVE),
        **fields,
    )


def save_tier(client, tier: EnvironmentTier, **changed):
    """The tier's change form posted as the admin fills it in, with `changed` on top."""
    url = f"/admin/tenants/environmenttier/{tier.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name) for name in form.fields}
    data = {name: "" if value is None else value for name, value in data.items()}
    data = {name: value for name, value in {**data, **changed}.items() if value is not False}
    for name in ("sleep_at", "wake_at"):
        if isinstance(data.get(name), time):
            data[name] = data[name].strftime("%H:%M")
    return client.post(url, data, follow=True)


def test_the_tier_page_holds_its_hibernation_in_a_fieldset_of_its_own(client, staff):
    client.force_login(staff)
    dev = EnvironmentTier.objects.get(slug="dev")
    page = client.get(f"/admin/tenants/environmenttier/{dev.pk}/change/").content.decode()
    above, hibernation = page.split(">Hibernation<", 1)
    for field in (
        "sleep_weekdays",
        "sleep_at",
        "wake_at",
        "sleep_time_zone",
        "sleep_owner_choice",
        "wake_max_hours",
    ):
        assert f'name="{field}"' in hibernation and f'name="{field}"' not in above, field
    assert 'name="access_max_minutes"' in above and "blank days: they never sleep" in hibernation


def test_a_changed_schedule_settles_the_live_namespaces_that_follow_it(
    client, staff, demo_world, settled, django_capture_on_commit_callbacks
):
    following = namespace(demo_world, "payments-shop-dev")
    namespace(
        demo_world,
        "payments-own-dev",
        sleep_mode=SleepMode.CUSTOM,
        sleep_weekdays="*",
        sleep_at=time(22, 0),
        wake_at=time(6, 0),
    )
    namespace(demo_world, "payments-never-dev", sleep_mode=SleepMode.NEVER)
    namespace(demo_world, "payments-new-dev", state=NamespaceState.PENDING)
    namespace(demo_world, "payments-shop-prod", tier="prod")
    client.force_login(staff)
    dev = EnvironmentTier.objects.get(slug="dev")

    with django_capture_on_commit_callbacks(execute=True):
        response = save_tier(
            client,
            dev,
            sleep_weekdays="1-5",
            sleep_at="20:00",
            wake_at="08:00",
            sleep_time_zone="Europe/Rome",
        )

    assert response.status_code == 200
    assert "1 namespace(s) of dev follow its new sleep schedule now." in response.content.decode()
    dev.refresh_from_db()
    assert (dev.sleep_weekdays, dev.sleep_at, dev.wake_at) == ("1-5", time(20), time(8))
    assert settled == [(following.pk, "")]


def test_a_change_beside_the_schedule_settles_nothing(
    client, staff, demo_world, settled, django_capture_on_commit_callbacks
):
    namespace(demo_world, "payments-shop-dev")
    client.force_login(staff)
    dev = EnvironmentTier.objects.get(slug="dev")
    with django_capture_on_commit_callbacks(execute=True):
        response = save_tier(client, dev, wake_max_hours=4, sleep_owner_choice="times")
    assert "follow its new sleep schedule" not in response.content.decode()
    dev.refresh_from_db()
    assert (dev.wake_max_hours, dev.sleep_owner_choice) == (4, "times")
    assert settled == []


def test_a_schedule_the_model_refuses_is_shown_on_its_field_and_not_saved(
    client, staff, demo_world, settled, django_capture_on_commit_callbacks
):
    namespace(demo_world, "payments-shop-dev")
    client.force_login(staff)
    dev = EnvironmentTier.objects.get(slug="dev")
    with django_capture_on_commit_callbacks(execute=True):
        response = save_tier(client, dev, sleep_weekdays="1-5", sleep_at="20:00", wake_at="20:00")
    assert "Waking at the moment it sleeps would never sleep." in response.content.decode()
    dev.refresh_from_db()
    assert dev.sleep_weekdays == "" and settled == []
