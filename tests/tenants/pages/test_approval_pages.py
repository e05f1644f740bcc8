"""Deciding requests in the browser: the approval queue (who sees what, filters, a fixed
cost per view, digests kept from before a plan moved refused), approving the plan read on
the request's page, refusals, rejection with a reason, and the requester's comments and
cancelling."""

import pytest

from tenants.choices import RequestState
from tenants.models import AuditEvent, EnvironmentTier
from tenants.selectors import review
from tests.support.tenants_pages import submit
from tests.support.workflow import approve_if_needed


def test_queue_shows_platform_admin_the_pending_requests_oldest_first(client, demo_world):
    first, second = submit(demo_world, app="one"), submit(demo_world, app="two")
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/").content.decode()
    assert page.index(f"#{first.pk}<") < page.index(f"#{second.pk}<")


def test_queue_is_empty_for_a_developer(client, demo_world):
    submit(demo_world, requester=demo_world["owner"])
    client.force_login(demo_world["developer"])
    assert "Nothing is waiting for you." in client.get("/approvals/").content.decode()


def test_queue_shows_an_owner_only_what_owners_may_decide(client, demo_world):
    staging, prod = submit(demo_world, tier="staging", app="one"), submit(demo_world, app="two")
    client.force_login(demo_world["owner"])
    page = client.get("/approvals/").content.decode()
    assert f"#{staging.pk}<" in page
    assert f"#{prod.pk}<" not in page


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ({"tier": "staging"}, {"staging"}),
        ({"tier": "prod"}, {"prod"}),
        ({"kind": "namespace"}, {"staging", "prod"}),
        ({"kind": "project"}, set()),
        ({"tenant": "search"}, set()),
        ({"older_than": "1d"}, set()),
    ],
)
def test_queue_filters(client, demo_world, query, shown):
    requests = {
        "staging": submit(demo_world, tier="staging", app="one"),
        "prod": submit(demo_world, tier="prod", app="two"),
    }
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/", query).content.decode()
    assert {tier for tier, item in requests.items() if f"#{item.pk}<" in page} == shown


def test_admin_approves_from_the_request_page(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "Approve this plan" in page
    digest = page.split('name="plan_digest" value="')[1].split('"')[0]

    client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": digest})

    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED
    assert tenancy_request.approvals.get().plan_digest == digest


def test_a_decision_without_the_right_is_403_and_audited(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["owner"])  # prod needs a platform admin
    assert (
        "Approve this plan" not in client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    )

    response = client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": "x"})

    assert response.status_code == 403
    assert AuditEvent.objects.filter(
        action="request.approve.refused", actor=demo_world["owner"]
    ).exists()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED


def test_rejection_without_a_reason_is_refused_and_with_one_it_rejects(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    client.post(f"/requests/{tenancy_request.pk}/reject/", {"reason": ""})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED

    client.post(f"/requests/{tenancy_request.pk}/reject/", {"reason": "Use staging first."})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.REJECTED
    assert tenancy_request.status_message == "Use staging first."


def test_requester_comments_and_cancels(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["developer"])
    client.post(f"/requests/{tenancy_request.pk}/comment/", {"body": "Needed for the launch."})
    client.post(f"/requests/{tenancy_request.pk}/cancel/")

    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "Needed for the launch." in page
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.CANCELLED


def test_queue_reviews_a_row_once_then_costs_the_same_queries_for_one_row_or_nine(
    client, demo_world
):
    """A row carries the digest approving it binds to, as last reviewed and kept a while
    (tenants.selectors.reviews.queue_reviews): a view reads them all in one cache read,
    so its queries do not grow with its rows; only a request not reviewed lately is
    reviewed on the page, once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(demo_world["admin"])

    def queue_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/approvals/").status_code == 200
        return len(queries)

    submit(demo_world, app="app0")
    queue_queries()
    one = queue_queries()
    for index in range(1, 5):
        submit(demo_world, app=f"app{index}")
    reviewing = queue_queries()
    five = queue_queries()
    for index in range(5, 9):
        submit(demo_world, app=f"app{index}")
    queue_queries()
    nine = queue_queries()

    assert one == five == nine <= 9  # session, user, count, the rows: none per row
    # The view that first met four requests reviewed them: what their plans share (the
    # tier, the cluster, the tenant's names, the namespaces its AppProject names) read
    # once, then each its own inputs.
    assert five < reviewing <= five + 6 + 2 * 4


def test_a_digest_kept_from_before_the_plan_moved_is_refused_then_replaced(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    before = client.get("/approvals/").context["rows"][0][1].digest
    EnvironmentTier.objects.filter(slug="prod").update(pod_security_level="baseline")
    assert client.get("/approvals/").context["rows"][0][1].digest == before  # kept

    refused = client.post(
        f"/requests/{tenancy_request.pk}/approve/",
        {"plan_digest": before, "back": "queue"},
        follow=True,
    )
    assert "moved since the queue was shown" in refused.content.decode()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED

    # Approving read the plan as it is now: the queue shows that one, and it approves.
    after = client.get("/approvals/").context["rows"][0][1].digest
    assert after != before and after == review(tenancy_request).digest
    client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": after, "back": "queue"})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED
    assert tenancy_request.approvals.get().plan_digest == after


def test_auto_approved_request_needs_no_queue(demo_world):
    tenancy_request = submit(demo_world, tier="dev")
    assert tenancy_request.state == RequestState.APPROVED
    assert approve_if_needed(tenancy_request, approver=demo_world["admin"]) == tenancy_request


def test_approving_a_plan_that_changed_since_the_page_was_read_approves_nothing(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    digest = page.split('name="plan_digest" value="')[1].split('"')[0]
    # Meanwhile a platform admin tightens the prod tier's Pod Security: the plan changes.
    EnvironmentTier.objects.filter(slug="prod").update(pod_security_level="baseline")

    response = client.post(
        f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": digest}, follow=True
    )

    assert "moved since you opened this page" in response.content.decode()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED
    assert not tenancy_request.approvals.exists()
