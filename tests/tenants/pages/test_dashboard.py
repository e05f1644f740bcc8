"""The platform admins' dashboard: figures computed from the audit log's moments, shown to
platform admins only, at a fixed number of queries."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import services
from tenants.models import Tenant
from tenants.selectors import review
from tenants.selectors.dashboard import admin_dashboard, failure_cause, readable_duration
from tenants.services.lifecycle import return_to_approval
from tests.support.factories import UserFactory
from tests.support.timeline import ask, at, provision

NOW = timezone.now().replace(hour=18, minute=0, second=0, microsecond=0)


@pytest.fixture
def dashboard_world(demo_world):
    # The days' figures are kept in the cache under their events' fingerprint; a test's
    # history can repeat another's ids and moments, so each starts with none kept.
    return demo_world


@pytest.fixture
def history(dashboard_world):
    """Four requests of the last days, and two still waiting (the older 5 hours)."""
    admin = dashboard_world["admin"]
    day3, day1 = NOW - timedelta(days=3), NOW - timedelta(days=1)

    shop = at(day3, lambda: ask(dashboard_world, "shop"))
    at(
        day3 + timedelta(hours=2),
        lambda: services.approve_request(
            request_id=shop.pk, approver=admin, plan_digest=review(shop).digest
        ),
    )
    at(day3 + timedelta(hours=2, seconds=30), lambda: provision(shop.pk, ready=True))

    cart = at(day1, lambda: ask(dashboard_world, "cart"))
    at(
        day1 + timedelta(minutes=30),
        lambda: services.reject_request(request_id=cart.pk, approver=admin, reason="no"),
    )

    dev = at(day1, lambda: ask(dashboard_world, "till", tier="dev"))  # approved by policy
    at(day1 + timedelta(seconds=45), lambda: provision(dev.pk, ready=True))

    down = at(day1, lambda: ask(dashboard_world, "down"))
    at(
        day1 + timedelta(hours=1),
        lambda: services.approve_request(
            request_id=down.pk, approver=admin, plan_digest=review(down).digest
        ),
    )
    at(
        day1 + timedelta(hours=1, minutes=1),
        lambda: provision(
            down.pk, ready=False, message="sandbox: cluster unreachable: connection refused"
        ),
    )

    waiting = at(NOW - timedelta(hours=5), lambda: ask(dashboard_world, "queue"))
    at(NOW - timedelta(hours=1), lambda: ask(dashboard_world, "later"))
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
    assert [tick["label"] for tick in lead["ticks"]] == ["0", "30m", "1h", "1h 30m", "2h"]


def test_a_request_sent_back_to_approval_waits_again_from_then(dashboard_world):
    admin, start = dashboard_world["admin"], NOW - timedelta(days=2)
    shop = at(start, lambda: ask(dashboard_world, "shop"))
    at(
        start + timedelta(hours=1),
        lambda: services.approve_request(
            request_id=shop.pk, approver=admin, plan_digest=review(shop).digest
        ),
    )
    # Its plan changed before provisioning: a new decision, waited for from here.
    at(start + timedelta(hours=5), lambda: return_to_approval(request_id=shop.pk, reason="x"))
    other_admin = UserFactory(username="avery", is_platform_admin=True)
    at(
        start + timedelta(hours=5, minutes=20),
        lambda: services.approve_request(
            request_id=shop.pk, approver=other_admin, plan_digest=review(shop).digest
        ),
    )
    at(start + timedelta(hours=5, minutes=21), lambda: provision(shop.pk, ready=True))

    board = at(NOW, admin_dashboard)
    lead = board["lead_time"]  # 1h, then 20m (not 5h 20m since it was first submitted)
    assert (lead["count"], lead["p50"], lead["p90"]) == (2, "20m", "1h")
    assert board["provisioning_time"]["p50"] == "1m"  # from the approval that counted


def test_the_window_is_the_thirty_days_the_chart_shows(history):
    # Today and the 29 days before it: cart's and down's decisions (29 days back) are in,
    # shop's (31 days back) has left, and the totals count what the bars show.
    board = at(NOW + timedelta(days=28), admin_dashboard)
    assert board["lead_time"]["count"] == 2
    assert len(board["lead_time"]["days"]) == 30
    assert sum(day["count"] for day in board["lead_time"]["days"]) == 2
    assert at(NOW + timedelta(days=30), admin_dashboard)["lead_time"]["count"] == 0


def test_dashboard_is_for_platform_admins(client, dashboard_world, history):
    for member in ("developer", "owner"):  # of a tenant, even its owner
        client.force_login(dashboard_world[member])
        assert client.get("/dashboard/").status_code == 403
    client.force_login(dashboard_world["admin"])
    page = client.get("/dashboard/").content.decode()
    assert f'href="/requests/{history["waiting"].pk}/"' in page.split('id="oldest-waiting"')[1]
    assert "p50 <strong>1h</strong>, p90 <strong>2h</strong> over 3 decisions" in page
    assert "Cluster unreachable" in page
    assert 'role="img"' in page and "<title" in page
    assert 'class="tick scale" text-anchor="end">2h</text>' in page  # the chart's scale


def test_dashboard_queries_do_not_grow_with_requests(
    client, dashboard_world, history, django_assert_max_num_queries
):
    client.force_login(dashboard_world["admin"])
    # session, user, audit-link check, then the selector's four, the open campaigns, the
    # clusters without current guardrails and the requests waiting for them; the costs
    # card's tenants, namespaces, prices, environments and the removals of namespaces gone
    # with their audit events (tenants.selectors.costs, however many tenants)
    with django_assert_max_num_queries(16):
        assert client.get("/dashboard/").status_code == 200
    Tenant.objects.filter(pk=dashboard_world["tenant"].pk).update(
        budget_cpu_millis=100_000, budget_namespaces=100
    )
    dashboard_world["tenant"].refresh_from_db()
    for index in range(6):
        ask(dashboard_world, f"more{index}")
    with django_assert_max_num_queries(16):
        assert client.get("/dashboard/").status_code == 200


def test_the_selector_costs_five_queries_however_many_requests_and_three_once_read(
    dashboard_world, history, django_assert_num_queries
):
    # states, the days' fingerprints, the window's events, those requests' earlier events,
    # the oldest waiting; read again with nothing new, the days come from the cache
    with django_assert_num_queries(5):
        at(NOW, admin_dashboard)
    with django_assert_num_queries(3):
        assert at(NOW, admin_dashboard)["lead_time"]["count"] == 3
    for index in range(5):
        made = at(NOW - timedelta(days=2), lambda index=index: ask(dashboard_world, f"more{index}"))
        at(
            NOW - timedelta(days=1),
            lambda made=made: services.reject_request(
                request_id=made.pk, approver=dashboard_world["admin"], reason="no"
            ),
        )
    with django_assert_num_queries(5):  # the day the rejections were added to is read again
        board = at(NOW, admin_dashboard)
    assert board["lead_time"]["count"] == 8


# As the provisioner words failures (provisioning/reconcile/runs.py, git_step.py; kube/errors.py).
@pytest.mark.parametrize(
    ("message", "cause"),
    [
        (
            "Namespace/payments-shop-prod: sandbox: cluster unreachable: connection refused; gave "
            "up after waiting since 2026-01-05 10:00 UTC (30 minutes). Retry when it is back.",
            "cluster unreachable",
        ),
        (
            "GitOps commit https://git.example/payments.git: repository unreachable: its server "
            "did "
            "not answer (the connection failed or timed out); gave up after waiting since "
            "2026-01-05 10:00 UTC (30 minutes). Retry when it is back.",
            "GitOps repository unreachable",
        ),
        (
            "GitOps commit https://git.example/payments.git: ! [remote rejected] main (protected "
            "branch hook declined)",
            "GitOps commit refused",
        ),
        (
            "RoleBinding/payments-shop-prod/edit: 403 rolebindings.rbac.authorization.k8s.io is "
            "forbidden",
            "refused by the API server (401/403)",
        ),
        ('Namespace/payments-shop-prod: 422 Namespace "x" is invalid', "invalid object (422)"),
        (
            "ConfigMap/payments-shop-prod/a: 409 Apply failed with 1 conflict",
            "conflict with another owner (409)",
        ),
        (
            "Namespace/payments-shop-prod: sandbox: 503 Service Unavailable; gave up after waiting",
            "API server error (5xx)",
        ),
        (
            "Namespace/payments-shop-prod: 404 the server could not find the requested resource",
            "other API refusal (4xx)",
        ),
        (
            "The plan failed validation, nothing was applied: Namespace/x: name too long",
            "plan failed validation",
        ),
        (
            "Namespace/x: the cluster's credentials or kubeconfig cannot be used; a platform admin "
            "must correct the cluster in Berth",
            "cluster settings or credentials",
        ),
        (
            "Namespace/old: sandbox: Namespace/old is still terminating after 120s; gave up",
            "namespace still terminating",
        ),
        (
            "Namespace/x: refusing to delete Namespace/x: it is not labelled as Berth's for tenant "
            "payments",
            "object not Berth's",
        ),
        ("something new", "other"),
    ],
)
def test_failure_causes(message, cause):
    assert failure_cause(message) == cause


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (750, "12m 30s"),
        (11100, "3h 5m"),
        (10820, "3h"),
        (187200, "2d 4h"),
    ],
)
def test_durations_read_as_people_read_a_wait(seconds, text):
    assert readable_duration(seconds) == text
