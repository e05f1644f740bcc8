"""Deciding requests in the browser: the approval queue (who sees what, filters, a fixed
cost per row), approving the plan read on the request's page, refusals, rejection with a
reason, and the requester's comments and cancelling."""

import pytest

from tenants.choices import RequestState
from tenants.models import AuditEvent, EnvironmentTier
from tests.support.tenants_pages import submit
from tests.support.workflow import approve_if_needed


def test_queue_shows_platform_admin_the_pending_requests_oldest_first(client, world):
    first, second = submit(world, app="one"), submit(world, app="two")
    client.force_login(world["admin"])
    page = client.get("/approvals/").content.decode()
    assert page.index(f"#{first.pk}<") < page.index(f"#{second.pk}<")


def test_queue_is_empty_for_a_developer(client, world):
    submit(world, requester=world["owner"])
    client.force_login(world["developer"])
    assert "Nothing is waiting for you." in client.get("/approvals/").content.decode()


def test_queue_shows_an_owner_only_what_owners_may_decide(client, world):
    staging, prod = submit(world, tier="staging", app="one"), submit(world, app="two")
    client.force_login(world["owner"])
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
def test_queue_filters(client, world, query, shown):
    requests = {
        "staging": submit(world, tier="staging", app="one"),
        "prod": submit(world, tier="prod", app="two"),
    }
    client.force_login(world["admin"])
    page = client.get("/approvals/", query).content.decode()
    assert {tier for tier, item in requests.items() if f"#{item.pk}<" in page} == shown


def test_admin_approves_from_the_request_page(client, world):
    tenancy_request = submit(world)
    client.force_login(world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "Approve this plan" in page
    digest = page.split('name="plan_digest" value="')[1].split('"')[0]

    client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": digest})

    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED
    assert tenancy_request.approvals.get().plan_digest == digest


def test_a_decision_without_the_right_is_403_and_audited(client, world):
    tenancy_request = submit(world)
    client.force_login(world["owner"])  # prod needs a platform admin
    assert (
        "Approve this plan" not in client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    )

    response = client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": "x"})

    assert response.status_code == 403
    assert AuditEvent.objects.filter(
        action="request.approve.refused", actor=world["owner"]
    ).exists()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED


def test_rejection_without_a_reason_is_refused_and_with_one_it_rejects(client, world):
    tenancy_request = submit(world)
    client.force_login(world["admin"])
    client.post(f"/requests/{tenancy_request.pk}/reject/", {"reason": ""})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED

    client.post(f"/requests/{tenancy_request.pk}/reject/", {"reason": "Use staging first."})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.REJECTED
    assert tenancy_request.status_message == "Use staging first."


def test_requester_comments_and_cancels(client, world):
    tenancy_request = submit(world)
    client.force_login(world["developer"])
    client.post(f"/requests/{tenancy_request.pk}/comment/", {"body": "Needed for the launch."})
    client.post(f"/requests/{tenancy_request.pk}/cancel/")

    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "Needed for the launch." in page
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.CANCELLED


def test_queue_costs_one_plan_review_per_row_and_no_more(client, world):
    """Every row of the queue can be approved where it stands, so each reads its plan's inputs
    afresh for the page to bind the digest it shows (a plan that moves must not be approved
    unseen): a fixed cost per row, bounded by the page size, and nothing else that grows."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(world["admin"])

    def queue_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/approvals/").status_code == 200
        return len(queries)

    submit(world, app="app0")
    one = queue_queries()
    for index in range(1, 5):
        submit(world, app=f"app{index}")
    five = queue_queries()
    for index in range(5, 9):
        submit(world, app=f"app{index}")
    nine = queue_queries()

    per_row = (five - one) // 4
    assert five - one == 4 * per_row and nine - five == 4 * per_row  # linear, no N+1 on top
    # What the plans share (the tier, the cluster, the tenant's claimed names) is read once
    # for the page; each row reads its own request's namespaces and project.
    assert per_row <= 2
    assert one - per_row <= 11  # the page: session, user, count, the rows, the shared reads


def test_auto_approved_request_needs_no_queue(world):
    tenancy_request = submit(world, tier="dev")
    assert tenancy_request.state == RequestState.APPROVED
    assert approve_if_needed(tenancy_request, approver=world["admin"]) == tenancy_request


def test_approving_a_plan_that_changed_since_the_page_was_read_approves_nothing(client, world):
    tenancy_request = submit(world)
    client.force_login(world["admin"])
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
