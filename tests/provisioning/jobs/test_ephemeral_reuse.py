"""What CI asks on every push to a pull request: `POST /api/v1/environments/?reuse=true`
finds the project's live environment of that slug again (one namespace, one request however
many pushes), restarts its TTL (for those who may extend it), refuses another branch under
the same slug and a push that meets it ending; after it ended, the next push makes a new
one."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from tenants.choices import EnvironmentState, RequestKind
from tenants.models import AuditEvent, EphemeralEnvironment, Request
from tests.support.ephemeral import converge_all, create, tenant_namespaces

REUSE = "?reuse=true"


def test_every_push_after_the_first_finds_the_same_environment(ephemeral_world, sandbox):
    api = ephemeral_world["api"]
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        first = create(api, "pr-8", query=REUSE, ttl="4h")
        assert first.status_code == 201, first.json()
        converge_all(RequestKind.EPHEMERAL)
        clock.shift(timedelta(hours=3))
        second = create(api, "pr-8", query=REUSE, ttl="4h")
        third = create(api, "pr-8", query=REUSE)  # no ttl: the one it was given
    assert second.status_code == 200 and third.status_code == 200, third.json()
    assert second.json()["id"] == third.json()["id"] == first.json()["id"]
    assert third.json()["state"] == EnvironmentState.LIVE
    assert third.json()["request_state"] == "ready"
    assert third.json()["page"].endswith(f"/environments/{first.json()['id']}/")
    assert Request.objects.filter(kind=RequestKind.EPHEMERAL).count() == 1
    assert tenant_namespaces(sandbox) == {"payments-shop-pr-8"}
    # Each push restarted its four hours, as GitLab's auto_stop_in does on every deploy.
    environment = EphemeralEnvironment.objects.get(pk=first.json()["id"])
    assert environment.expires_at == start + timedelta(hours=3) + timedelta(hours=4)
    assert (
        AuditEvent.objects.filter(
            action="environment.extend", object_id=str(environment.pk)
        ).count()
        == 2
    )


def test_a_push_near_its_maximum_keeps_it_until_the_maximum(ephemeral_world, sandbox):
    api = ephemeral_world["api"]
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        made = create(api, "pr-9", query=REUSE, ttl="1d").json()
        environment = EphemeralEnvironment.objects.get(pk=made["id"])
        clock.shift(environment.max_expires_at - start - timedelta(hours=2))
        again = create(api, "pr-9", query=REUSE, ttl="1d")
    assert again.status_code == 200, again.json()
    assert EphemeralEnvironment.objects.get(pk=made["id"]).expires_at == (
        environment.max_expires_at
    )


def test_without_reuse_a_second_create_is_refused_saying_which(ephemeral_world, sandbox):
    api = ephemeral_world["api"]
    made = create(api, "pr-10").json()
    again = create(api, "pr-10")
    assert again.status_code == 400
    assert f"#{made['id']}" in again.json()["errors"]["env_slug"][0]


def test_another_branch_under_the_same_slug_is_refused(ephemeral_world, sandbox):
    api = ephemeral_world["api"]
    create(api, "pr-11", query=REUSE)
    other = create(api, "pr-11", query=REUSE, branch="feature/other")
    assert other.status_code == 400
    assert "feature/pr-11" in other.json()["errors"]["branch"][0]
    assert EphemeralEnvironment.objects.filter(slug="pr-11").count() == 1


def test_a_push_that_meets_it_ending_is_refused_and_one_after_it_ended_starts_anew(
    ephemeral_world, sandbox
):
    api = ephemeral_world["api"]
    made = create(api, "pr-12", query=REUSE).json()
    converge_all(RequestKind.EPHEMERAL)
    stop = {"tenant": "payments", "project": "shop", "env_slug": "pr-12"}
    assert api.post("/api/v1/environments/stop/", stop, format="json").status_code == 202
    ending = create(api, "pr-12", query=REUSE)
    assert ending.status_code == 409
    assert "ending" in ending.json()["detail"]

    converge_all(RequestKind.END_ENVIRONMENT)
    reopened = create(api, "pr-12", query=REUSE)
    assert reopened.status_code == 201
    assert reopened.json()["id"] != made["id"]
    converge_all(RequestKind.EPHEMERAL)
    assert tenant_namespaces(sandbox) == {"payments-shop-pr-12"}


def test_only_those_who_may_extend_it_restart_its_ttl_and_an_outsider_finds_nothing(
    ephemeral_world, sandbox
):
    from rest_framework.test import APIClient

    from tenants.choices import Role
    from tenants.models import Membership
    from tests.support.factories import UserFactory

    made = create(ephemeral_world["api"], "pr-13", query=REUSE, ttl="1h").json()
    viewer, outsider = UserFactory(), UserFactory()
    Membership.objects.create(user=viewer, tenant=ephemeral_world["tenant"], role=Role.VIEWER)
    for person, status in ((viewer, 200), (outsider, 404)):
        api = APIClient()
        api.force_authenticate(person)
        answer = create(api, "pr-13", query=REUSE, ttl="3d")
        assert answer.status_code == status, answer.json()
    environment = EphemeralEnvironment.objects.get(pk=made["id"])
    assert environment.expires_at.isoformat().replace("+00:00", "Z") == made["expires_at"]
    assert not AuditEvent.objects.filter(action="environment.extend").exists()


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="concurrent pushes are serialised by a row lock (SELECT … FOR UPDATE), which "
    "SQLite does not have. Runs on PostgreSQL (set DATABASE_URL)",
)
@pytest.mark.django_db(transaction=True)
def test_five_pushes_at_once_make_one_environment(ephemeral_world, sandbox):
    from tenants import services

    pushes = 5
    barrier = threading.Barrier(pushes)
    outcomes: list[object] = [None] * pushes
    payload = {"project": "shop", "env_slug": "pr-14", "branch": "feature/pr-14", "ttl": "4h"}

    def push(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            environment, created = services.ensure_environment(
                tenant=ephemeral_world["tenant"],
                payload=payload,
                requester=ephemeral_world["developer"],
            )
            outcomes[index] = (environment.pk, created)
        except Exception as exc:  # the test's answer: what went wrong, not a hung thread
            outcomes[index] = repr(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=push, args=(index,)) for index in range(pushes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a push hung"
    (environment,) = EphemeralEnvironment.objects.filter(slug="pr-14")
    assert sorted(outcomes, key=str) == sorted(
        [(environment.pk, True)] + [(environment.pk, False)] * (pushes - 1), key=str
    ), outcomes
    assert Request.objects.filter(kind=RequestKind.EPHEMERAL).count() == 1
