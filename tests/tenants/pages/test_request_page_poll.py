"""A request's page follows its request with one poll: in each state the poll's answer
brings the header, the decisions, the history and the actions the full page shows, keeps
the decision forms while the offer stands, and costs as many queries however long the
history."""

import pytest

from tenants import services
from tenants.errors import DomainError
from tenants.models import Request, User
from tenants.selectors import review
from tests.support.tenants_pages import (
    approve,
    fragment,
    part,
    to_approved,
    to_cancelled,
    to_decommissioned,
    to_failed,
    to_provisioning,
    to_ready,
    to_rejected,
)

# --- the whole page follows its request, with one poll ---------------------------------------


# state reached, what the header's badge says, whether the page keeps asking, the decision
# row, the last history entry, whether the requester is offered "Cancel this request".
STATES = [
    (None, "Awaiting approval", True, None, "submitted the request", True),
    (to_approved, "Approved", True, "Approved by Pat Platform", "approved the request", False),
    (
        to_provisioning,
        "Provisioning",
        True,
        "Approved by Pat Platform",
        "started provisioning",
        False,
    ),
    (to_ready, "Ready", False, "Approved by Pat Platform", "approved the request", False),
    (to_failed, "Failed", False, "Approved by Pat Platform", "stopped provisioning: failed", False),
    (
        to_rejected,
        "Rejected",
        False,
        "Rejected by Pat Platform: “Use the shared prod",
        "rejected the request",
        False,
    ),
    (to_cancelled, "Cancelled", False, None, "cancelled the request", False),
    (
        to_decommissioned,
        "Decommissioned",
        False,
        "Approved by Pat Platform",
        "approved the request",
        False,
    ),
]


@pytest.mark.parametrize(
    ("reach", "badge", "moving", "decision", "history", "cancel"),
    STATES,
    ids=[row[1] for row in STATES],
)
def test_the_poll_brings_the_header_decisions_history_and_actions_of_each_state(
    client, demo_world, submitted, settings, reach, badge, moving, decision, history, cancel
):
    if reach:
        reach(demo_world, submitted, settings)
    client.force_login(demo_world["developer"])
    answer = fragment(client, submitted)

    assert answer.lstrip().startswith('<section id="progress"')  # the poll's own element first
    header = part(answer, "request-header")
    assert f'data-testid="request-state">{badge}</span>' in header
    assert ('data-poll="' in answer) is moving
    if decision:
        assert "Decisions" in header and decision in header
    else:
        assert "Decisions" not in header
    assert history in part(answer, "history")
    assert ("Cancel this request" in part(answer, "request-actions")) is cancel
    # What the poll's answer offers, the full page offers too.
    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    assert ("Cancel this request" in page) is cancel
    assert f'data-testid="request-state">{badge}</span>' in page


def test_the_header_says_the_status_line_and_leaves_the_submission_message_behind(
    client, demo_world, submitted
):
    client.force_login(demo_world["developer"])
    awaiting = part(fragment(client, submitted), "request-header")
    assert 'id="request-status"' in awaiting and "Awaiting approval: 0 of 1" in awaiting

    approve(demo_world, submitted)
    approved = part(fragment(client, submitted), "request-header")
    assert "Awaiting approval" not in approved


def test_a_submitted_request_is_announced_without_a_state_that_would_go_stale(client, demo_world):
    client.force_login(demo_world["developer"])
    response = client.post(
        "/tenants/payments/request/namespace/",
        {
            "app": "shop",
            "tier": "prod",
            "cluster": "sandbox",
            "cpu": "1",
            "memory": "1Gi",
        },
        follow=True,
    )
    created = Request.objects.get()
    assert f"Request #{created.pk} submitted." in response.content.decode()
    assert "submitted: awaiting approval" not in response.content.decode()


def test_the_decision_forms_are_kept_while_the_offer_stands_and_go_once_decided(
    client, demo_world, submitted
):
    client.force_login(demo_world["admin"])
    digest = review(submitted).digest
    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    # The page's poll carries the plan it shows, so it can tell an approval already given.
    assert f"/requests/{submitted.pk}/progress/?digest={digest}" in page
    assert 'data-swap-key="decide cancel"' in page and 'id="approve-button"' in page

    waiting = part(fragment(client, submitted, digest), "request-actions")
    assert 'data-swap-key="decide cancel"' in waiting  # the same key: the page keeps its forms

    approve(demo_world, submitted)
    decided = part(fragment(client, submitted, digest), "request-actions")
    assert 'data-swap-key=""' in decided
    assert "Your decision" not in decided and "Cancel this request" not in decided


def test_an_approver_who_approved_this_plan_is_not_offered_to_approve_it_again(
    client, demo_world, submitted
):
    Request.objects.filter(pk=submitted.pk).update(approvals_required=2)
    digest = review(submitted).digest
    approve(demo_world, submitted)
    client.force_login(demo_world["admin"])

    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    assert "Approve this plan" not in page and "Awaiting approval: 1 of 2" in page
    assert "Your decision" not in part(fragment(client, submitted, digest), "request-actions")
    with pytest.raises(DomainError, match="already approved"):
        approve(demo_world, submitted)  # what would have been refused


@pytest.mark.parametrize("rows", [1, 6])
def test_the_poll_answers_in_as_many_queries_however_long_the_history(
    client, demo_world, submitted, django_assert_max_num_queries, rows
):
    Request.objects.filter(pk=submitted.pk).update(approvals_required=rows + 1)
    digest = review(submitted).digest
    for index in range(rows):
        approver = User.objects.create(username=f"admin{index}", is_platform_admin=True)
        services.approve_request(request_id=submitted.pk, approver=approver, plan_digest=digest)
        services.add_comment(
            request_id=submitted.pk, author=demo_world["developer"], body=f"Any news? ({index})"
        )
    client.force_login(demo_world["admin"])
    # Session and user, the request, its run, namespaces, Kargo name, decide (already
    # approved?), approvals, history: nine, whatever the rows.
    with django_assert_max_num_queries(9):
        answer = fragment(client, submitted, digest)
    assert answer.count('class="pill">Approved by') == rows
    client.force_login(demo_world["developer"])
    with django_assert_max_num_queries(9):
        fragment(client, submitted, digest)
