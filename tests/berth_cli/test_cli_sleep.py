"""`berth wake` against a live Berth whose cluster is the stand-in and whose worker's jobs run
as they are queued (the `live` fixture): payments' dev namespace sleeps on its tier's
schedule; a member wakes it for two hours and waits until the engine has it awake (exit 0);
--wait waits while the engine has not woken it yet, and gives up on its timeout (exit 3);
an outsider and hours beyond the tier's longest wake are refused as the API says, by field."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from tenants.choices import NamespaceState
from tenants.models import AuditEvent, EnvironmentTier, Namespace, Tenant, User
from tenants.signals import namespace_sleep_changed
from tests.berth_cli.test_cli_access import berth_as, decided, waiting
from tests.support.watching import eventually
from tests.support.workflow import approve_if_needed, ask_for_namespace

# Each test here starts a program (python): make test-fast leaves them out.
pytestmark = pytest.mark.processes

NAMESPACE = "payments-shop-dev"


@pytest.fixture
def asleep(live) -> Namespace:
    """payments' dev namespace, provisioned on the stand-in; its tier sleeps every day from
    an hour ago to three hours from now (UTC), and its cluster holds it asleep."""
    payments = Tenant.objects.get(slug="payments")
    asked = ask_for_namespace(payments, User.objects.get(username="dev"), app="shop")
    approve_if_needed(asked, approver=User.objects.get(username="pat"))
    namespace = Namespace.objects.get(name=NAMESPACE, state=NamespaceState.ACTIVE)
    now = timezone.now()
    EnvironmentTier.objects.filter(pk=namespace.tier_id).update(
        sleep_weekdays="*",
        sleep_at=(now - timedelta(hours=1)).time().replace(second=0, microsecond=0),
        wake_at=(now + timedelta(hours=3)).time().replace(second=0, microsecond=0),
        sleep_time_zone="UTC",
        wake_max_hours=4,
    )
    Namespace.objects.filter(pk=namespace.pk).update(asleep=True, slept_at=now)
    return Namespace.objects.get(pk=namespace.pk)


@pytest.fixture
def unheard():
    """The engine does not hear of the wake (nothing receives namespace_sleep_changed): the
    cluster keeps the namespace asleep until the test says otherwise."""
    with mock.patch.object(namespace_sleep_changed, "receivers", []):
        yield


def test_a_member_wakes_it_for_two_hours_and_waits_until_it_is_awake(live, asleep):
    done = berth_as(live, "dev", f"wake {NAMESPACE} --hours 2 --wait --interval 0.2 --timeout 60")

    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"{NAMESPACE} on sandbox: awake until " in done.stdout
    asleep.refresh_from_db()
    assert not asleep.asleep
    assert asleep.awake_until is not None
    assert (
        timedelta(hours=1, minutes=59) < asleep.awake_until - timezone.now() <= timedelta(hours=2)
    )
    event = AuditEvent.objects.get(action="namespace.woken")
    assert event.actor == User.objects.get(username="dev")


def test_wait_waits_until_its_cluster_holds_it_awake(live, asleep, unheard):
    running = waiting(live, "olivia", f"wake {NAMESPACE} --wait --interval 0.2 --timeout 120")
    eventually(
        lambda: Namespace.objects.filter(pk=asleep.pk, awake_until__isnull=False).exists(),
        "berth wake woke it",
    )
    decided(lambda: Namespace.objects.filter(pk=asleep.pk).update(asleep=False))
    out, errors = running.communicate(timeout=120)

    assert running.returncode == 0, (out, errors)
    assert "(its workloads are coming back)" in out
    assert f"Waiting for {NAMESPACE}'s workloads to come back" in errors
    assert f"{NAMESPACE} is awake: its workloads are back." in out


def test_wait_gives_up_on_its_timeout(live, asleep, unheard):
    done = berth_as(live, "dev", f"wake {NAMESPACE} --wait --interval 0.2 --timeout 1")

    assert done.returncode == 3, (done.stdout, done.stderr)
    assert f"{NAMESPACE} is still asleep after 1 s" in done.stderr
    assert "is awake" not in done.stdout


def test_what_the_api_refuses_is_said_and_nothing_changes(live, asleep):
    outsider = berth_as(live, "sam", f"wake {NAMESPACE}")
    assert outsider.returncode == 1 and "404" in outsider.stderr

    too_long = berth_as(live, "dev", f"wake {NAMESPACE} --hours 9")
    assert too_long.returncode == 1
    assert "400" in too_long.stderr
    assert "hours: A wake of a dev namespace lasts 1 to 4 hours." in too_long.stderr

    asleep.refresh_from_db()
    assert asleep.asleep and asleep.awake_until is None
    assert not AuditEvent.objects.filter(action="namespace.woken").exists()
    usage = berth_as(live, "dev", "wake")
    assert usage.returncode == 2 and "NAMESPACE" in usage.stderr
