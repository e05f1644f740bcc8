"""What a person may do with a request, one answer for the page, its poll and the API
(tenants.selectors.request_actions): it starts from the states the services allow, and
offers exactly what the services would let each person do."""

import pytest

from tenants import services
from tenants.choices import RequestState
from tenants.errors import NotAllowed
from tenants.models import Request, User
from tests.support.tenants_pages import approve, fragment, part, to_failed, to_ready

# --- what a person may do with a request: one answer ----------------------------------------


def test_the_actions_start_from_the_states_the_services_allow():
    from tenants.selectors.requests import (
        CANCELLABLE_STATES,
        DECIDABLE_STATES,
        RETRYABLE_STATES,
    )
    from tenants.services import TRANSITIONS

    starts = {action: TRANSITIONS[action].sources for action in TRANSITIONS}
    assert starts["approve"] == starts["reject"] == DECIDABLE_STATES
    assert starts["cancel"] == CANCELLABLE_STATES
    assert starts["retry"] == RETRYABLE_STATES


def test_what_each_person_may_do_with_a_submitted_request(demo_world, submitted):
    from tenants.selectors import RequestActions, request_actions

    colleague = User.objects.create(username="colleague")
    demo_world["tenant"].memberships.create(user=colleague, role="developer")
    superuser = User.objects.create(username="root", is_superuser=True)

    assert request_actions(demo_world["developer"], submitted) == RequestActions(cancel=True)
    assert request_actions(demo_world["admin"], submitted) == RequestActions(
        decide=True, cancel=True
    )
    assert request_actions(colleague, submitted) == RequestActions()
    assert request_actions(superuser, submitted) == RequestActions(decide=True, cancel=True)


@pytest.mark.parametrize("who", ["developer", "admin", "colleague", "superuser"])
def test_cancel_is_offered_exactly_to_those_the_service_lets_cancel(demo_world, submitted, who):
    from tenants.selectors import request_actions

    people = {
        "colleague": lambda: (
            demo_world["tenant"]
            .memberships.create(user=User.objects.create(username="colleague"), role="developer")
            .user
        ),
        "superuser": lambda: User.objects.create(username="root", is_superuser=True),
    }
    person = people[who]() if who in people else demo_world[who]
    offered = request_actions(person, submitted).cancel
    try:
        services.cancel_request(request_id=submitted.pk, actor=person)
    except NotAllowed:
        allowed = False
    else:
        allowed = True
    assert offered is allowed


def test_retry_is_offered_to_platform_admins_of_a_failed_request_only(
    demo_world, submitted, settings
):
    from tenants.selectors import RequestActions, request_actions

    to_failed(demo_world, submitted, settings)
    submitted.refresh_from_db()
    assert submitted.state == RequestState.FAILED
    assert request_actions(demo_world["admin"], submitted) == RequestActions(retry=True)
    assert request_actions(demo_world["developer"], submitted) == RequestActions()


def test_nothing_is_offered_once_a_request_is_ready(demo_world, submitted, settings):
    from tenants.selectors import RequestActions, request_actions

    to_ready(demo_world, submitted, settings)
    submitted.refresh_from_db()
    for person in (demo_world["developer"], demo_world["admin"]):
        assert request_actions(person, submitted) == RequestActions()


def test_the_api_reports_what_the_page_offers(client, demo_world, submitted):
    Request.objects.filter(pk=submitted.pk).update(approvals_required=2)
    approve(demo_world, submitted)
    client.force_login(demo_world["admin"])
    body = client.get(f"/api/v1/requests/{submitted.pk}/").json()
    # Pat has approved this plan: approving it again would be refused.
    assert body["permissions"] == {"may_decide": False, "may_cancel": True, "may_retry": False}


def test_a_decision_newly_offered_by_the_poll_sends_the_approver_to_review_the_plan(
    client, demo_world, submitted
):
    # A page opened without the decision (here: before the plan it would approve was
    # known) never gets an approve button from the poll, which reads no repository.
    client.force_login(demo_world["admin"])
    actions = part(fragment(client, submitted), "request-actions")
    assert 'data-swap-key="decide cancel"' in actions
    assert "approve-button" not in actions and "plan_digest" not in actions
    assert f'href="/requests/{submitted.pk}/">Open it again</a>' in actions
