"""The platform admins' dashboard: figures computed from the audit log's moments, shown to
platform admins only, at a fixed number of queries."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from tenants import services
from tenants.engine import review
from tenants.models import Tenant
from tenants.selectors.dashboard import admin_dashboard, failure_cause, readable_duration
from tenants.services.lifecycle import transition

NOW = timezone.now().replace(hour=18, minute=0, second=0, microsecond=0)


@pytest.fixture
def world(demo_world):
    return demo_world


def at(moment, action):  # noqa: ANN001, ANN201
    with time_machine.travel(moment, tick=False):
        return action()


def ask(world, app: str, tier: str = "prod"):  # noqa: ANN201
    return services.submit_request(
        tenant=world["tenant"], kind="namespace", requester=world["developer"],
        payload={"app": app, "tier": tier, "cluster": "sandbox", "cpu": "1", "memory": "1Gi"})


def provision(request_id: int, *, ready: bool, message: str = ""):  # noqa: ANN201
    transition(request_id=request_id, action="start_provisioning", actor=None)
    return transition(request_id=request_id, action="mark_ready" if ready else "mark_failed",
                      actor=None, message=message)


@pytest.fixture
def history(world):
    """Four requests of the last days, and two still waiting (the older 5 hours)."""
    admin = world["admin"]
    day3, day1 = NOW - timedelta(days=3), NOW - timedelta(days=1)

    shop = at(day3, lambda: ask(world, "shop"))
    at(day3 + timedelta(hours=2), lambda: services.approve_request(
        request_id=shop.pk, approver=admin, plan_digest=review(shop).digest))
    at(day3 + timedelta(hours=2, seconds=30), lambda: provision(shop.pk, ready=True))

    cart = at(day1, lambda: ask(world, "cart"))
    at(day1 + timedelta(minutes=30), lambda: services.reject_request(
        request_id=cart.pk, approver=admin, reason="no"))

    dev = at(day1, lambda: ask(world, "till", tier="dev"))  # approved by policy
    at(day1 + timedelta(seconds=45), lambda: provision(dev.pk, ready=True))

    down = at(day1, lambda: ask(world, "down"))
    at(day1 + timedelta(hours=1), lambda: services.approve_request(
        request_id=down.pk, approver=admin, plan_digest=review(down).digest))
    at(day1 + timedelta(hours=1, minutes=1), lambda: provision(
        down.pk, ready=False, message="sandbox: cluster unreachable: connection refused"))

    waiting = at(NOW - timedelta(hours=5), lambda: ask(world, "queue"))
    at(NOW - timedelta(hours=1), lambda: ask(world, "later"))
    return {"waiting": waiting}


def test_figures_come_from_the_moments_in_the_audit_log(history):
    board = at(NOW, admin_dashboard)

    states = {row["state"]: row["count"] for row in board["states"]}
    assert states["submitted"] == 2 and states["ready"] == 2
    assert states["rejected"] == 1 and states["failed"] == 1
    lead = board["lead_time"]  # 2h (shop), 30m (cart), 1h (down); policy's is no wait
    assert (lead["count"], lead["p50"], lead["p90"]) == (3, "1h", "2h")
    provisioning = board["provisioning_time"]  # 30s after approval, 45s after submission
    assert (provisioning["count"], provisioning["p50"], provisioning["p90"]) == (2, "30s", "45s")
    assert board["failures"] == [{"cause": "cluster unreachable", "count": 1, "width": 100.0}]
    assert board["oldest_waiting"] == history["waiting"]
    assert board["oldest_waited"] == "5h"
    per_day = {row["day"]: row for row in lead["days"]}
    yesterday = per_day[timezone.localdate(NOW - timedelta(days=1))]
    assert (yesterday["count"], yesterday["median_text"]) == (2, "30m")
    assert max(row["height"] for row in lead["days"]) == 100


def test_the_window_is_thirty_days(history):
    board = at(NOW + timedelta(days=29), admin_dashboard)
    assert board["lead_time"]["count"] == 2  # shop's decision, 32 days ago, has left it
    assert len(board["lead_time"]["days"]) == 30


def test_dashboard_is_for_platform_admins(client, world, history):
    client.force_login(world["developer"])
    assert client.get("/dashboard/").status_code == 403
    client.force_login(world["admin"])
    page = client.get("/dashboard/").content.decode()
    assert f'href="/requests/{history["waiting"].pk}/"' in page.split('id="oldest-waiting"')[1]
    assert "p50 <strong>1h</strong>, p90 <strong>2h</strong> over 3 decisions" in page
    assert "Cluster unreachable" in page
    assert 'role="img"' in page and "<title" in page


def test_dashboard_queries_do_not_grow_with_requests(client, world, history,
                                                     django_assert_max_num_queries):
    client.force_login(world["admin"])
    # session, user, audit-link check, states, window events, earlier events, oldest
    with django_assert_max_num_queries(8):
        assert client.get("/dashboard/").status_code == 200
    Tenant.objects.filter(pk=world["tenant"].pk).update(budget_cpu_millis=100_000,
                                                       budget_namespaces=100)
    world["tenant"].refresh_from_db()
    for index in range(6):
        ask(world, f"more{index}")
    with django_assert_max_num_queries(8):
        assert client.get("/dashboard/").status_code == 200


@pytest.mark.parametrize(("message", "cause"), [
    ("sandbox: cluster unreachable: connection refused", "cluster unreachable"),
    ("RoleBinding/a/b: 403 forbidden", "refused by the API server (403)"),
    ("Namespace/x: 422 Namespace is invalid", "invalid object (422)"),
    ("GitOps: repository unreachable", "GitOps repository"),
    ("something new", "other"),
])
def test_failure_causes(message, cause):
    assert failure_cause(message) == cause


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (45, "45s"), (750, "12m 30s"), (11100, "3h 5m"), (10820, "3h"),
    (187200, "2d 4h"),
])
def test_durations_read_as_people_read_a_wait(seconds, text):
    assert readable_duration(seconds) == text
