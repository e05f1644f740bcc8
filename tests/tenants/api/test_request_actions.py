"""Acting on a request through the REST API (/api/v1/requests/{id}/...): approving the plan
(by the policy's approver role, with the digest read), rejecting, cancelling, commenting,
retrying a failed request, and reading its provisioning runs.

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tenants.choices import RequestState
from tenants.models import Comment, Namespace, Request
from tenants.selectors import review
from tests.support.api import api, assert_problem, submit
from tests.support.tenants_api import REQUESTS, approve, failed_request

# --- deciding and acting -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "who", "status"),
    [
        ("prod", "admin", 200),
        ("prod", "owner", 403),
        ("prod", "member", 403),
        ("prod", "viewer", 403),
        ("prod", "outsider", 404),
        ("staging", "owner", 200),
        ("staging", "member", 403),
    ],
)
def test_approval_follows_the_policys_approver_role(api_world, tier, who, status):
    tenancy_request = submit(api_world, tier=tier)
    response = approve(api(getattr(api_world, who)), tenancy_request)
    assert response.status_code == status, response.json()
    if status == 200:
        assert response.json()["state"] == "approved"
        assert response.json()["approvals"][-1]["approver"] == getattr(api_world, who).username
    else:
        assert_problem(response, status)


def test_nobody_approves_their_own_request(api_world):
    tenancy_request = submit(api_world, tier="prod", requester=api_world.admin)
    body = assert_problem(approve(api(api_world.admin), tenancy_request), 403, "forbidden")
    assert "own request" in body["detail"]


def test_approving_a_stale_plan_is_409_with_the_current_digest(api_world):
    tenancy_request = submit(api_world, tier="prod")
    body = assert_problem(
        approve(api(api_world.admin), tenancy_request, digest="0" * 64), 409, "plan-changed"
    )
    assert body["current_plan_digest"] == review(tenancy_request).digest
    assert Request.objects.get().state == RequestState.SUBMITTED


def test_approving_twice_is_an_illegal_transition(api_world):
    tenancy_request = submit(api_world, tier="prod")
    client = api(api_world.admin)
    assert approve(client, tenancy_request).status_code == 200
    body = assert_problem(approve(client, tenancy_request), 409, "illegal-transition")
    assert "cannot be approved" in body["detail"]


def test_approval_needs_a_well_formed_digest(api_world):
    tenancy_request = submit(api_world, tier="prod")
    body = assert_problem(approve(api(api_world.admin), tenancy_request, digest="abc"), 400)
    assert "plan_digest" in body["errors"]


def test_reject_needs_a_reason_and_releases_the_name(api_world):
    tenancy_request = submit(api_world, tier="prod")
    client = api(api_world.admin)
    url = f"{REQUESTS}{tenancy_request.pk}/reject/"
    assert (
        "reason" in assert_problem(client.post(url, {"reason": "  "}, format="json"), 400)["errors"]
    )

    response = client.post(url, {"reason": "Use staging first."}, format="json")

    assert response.json()["state"] == "rejected"
    assert response.json()["status_message"] == "Use staging first."
    assert not Namespace.objects.exists()


def test_reject_by_a_member_is_403(api_world):
    tenancy_request = submit(api_world, tier="prod", requester=api_world.owner)
    response = api(api_world.member).post(
        f"{REQUESTS}{tenancy_request.pk}/reject/", {"reason": "no"}, format="json"
    )
    assert_problem(response, 403)


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("member", 200),  # the requester
        ("admin", 200),
        ("owner", 403),
        ("viewer", 403),
        ("outsider", 404),
    ],
)
def test_cancel_is_for_the_requester_or_a_platform_admin(api_world, who, status):
    tenancy_request = submit(api_world, tier="prod")
    response = api(getattr(api_world, who)).post(f"{REQUESTS}{tenancy_request.pk}/cancel/")
    assert response.status_code == status
    if status == 200:
        assert response.json()["state"] == "cancelled"


def test_cancelling_an_approved_request_is_409(api_world):
    tenancy_request = submit(api_world, tier="dev")
    response = api(api_world.member).post(f"{REQUESTS}{tenancy_request.pk}/cancel/")
    body = assert_problem(response, 409, "illegal-transition")
    assert "approved" in body["detail"]


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("member", 201),
        ("viewer", 201),
        ("owner", 201),
        ("admin", 201),
        ("outsider", 404),
    ],
)
def test_anyone_who_sees_a_request_may_comment(api_world, who, status):
    tenancy_request = submit(api_world, tier="prod")
    response = api(getattr(api_world, who)).post(
        f"{REQUESTS}{tenancy_request.pk}/comment/", {"body": "Any news?"}, format="json"
    )
    assert response.status_code == status
    if status == 201:
        assert response.json()["author"] == getattr(api_world, who).username
        assert Comment.objects.get().body == "Any news?"


def test_comment_needs_text_and_at_most_4000_characters(api_world):
    tenancy_request = submit(api_world, tier="prod")
    client = api(api_world.member)
    url = f"{REQUESTS}{tenancy_request.pk}/comment/"
    assert_problem(client.post(url, {"body": ""}, format="json"), 400)
    assert_problem(client.post(url, {"body": "x" * 4001}, format="json"), 400)


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("admin", 200),
        ("owner", 403),
        ("member", 403),
        ("outsider", 404),
    ],
)
def test_retry_of_a_failed_request_is_for_platform_admins(api_world, who, status):
    tenancy_request = failed_request(api_world)
    response = api(getattr(api_world, who)).post(f"{REQUESTS}{tenancy_request.pk}/retry/")
    assert response.status_code == status
    if status == 200:
        assert response.json()["state"] == "provisioning"


def test_retrying_a_request_that_did_not_fail_is_409(api_world):
    tenancy_request = submit(api_world, tier="dev")
    assert_problem(
        api(api_world.admin).post(f"{REQUESTS}{tenancy_request.pk}/retry/"),
        409,
        "illegal-transition",
    )


def test_runs_show_steps_attempts_and_error(api_world):
    tenancy_request = failed_request(api_world)

    body = api(api_world.member).get(f"{REQUESTS}{tenancy_request.pk}/runs/").json()

    assert body["count"] == 1
    run = body["results"][0]
    assert run["state"] == "failed" and run["error"] == "the API server said no"
    assert {"steps", "attempts", "plan_digest", "started_at", "finished_at"} <= set(run)
    assert api(api_world.outsider).get(f"{REQUESTS}{tenancy_request.pk}/runs/").status_code == 404
