"""The REST API's requests, submitted and read (/api/v1/requests/): every kind of request, its
payload checked by the form's rules, the budget and the approval policy; lists and details
scoped to your tenants, with plan, approvals, comments and history; filters, ordering and
pages.

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import RequestState
from tenants.models import AuditEvent, Project, Request, Tenant
from tenants.selectors import review
from tests.support.api import NAMESPACE, api, assert_problem, submit
from tests.support.tenants_api import REQUESTS, active_namespace

# --- submitting ----------------------------------------------------------------------------


def test_member_requests_a_dev_namespace_and_policy_approves_it(api_world):
    response = api(api_world.member).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["Location"] == f"/api/v1/requests/{body['id']}/"
    assert body["state"] == RequestState.APPROVED
    assert body["payload"]["cpu_millis"] == 500
    assert body["requester"] == "dev" and body["tenant"] == "payments"
    assert body["plan"]["digest"] == review(Request.objects.get()).digest
    assert "kind: Namespace" in body["plan"]["yaml"]
    assert [event["action"] for event in body["history"]] == ["request.submit", "request.approve"]
    assert body["approvals"][0]["approver"] is None  # the policy
    assert AuditEvent.objects.filter(action="request.submit", actor=api_world.member).exists()


@pytest.mark.parametrize(
    ("kind", "payload", "setup"),
    [
        (
            "project",
            {
                "app": "checkout",
                "engine": "argocd",
                "cluster": "sandbox",
                "tiers": ["dev", "staging"],
            },
            None,
        ),
        (
            "environment",
            {
                "project": "billing",
                "tier": "staging",
                "cluster": "sandbox",
                "cpu": "1",
                "memory": "1Gi",
            },
            "project",
        ),
        (
            "quota_change",
            {"namespace": "payments-live-dev", "cpu": "2", "memory": "2Gi"},
            "namespace",
        ),
        ("decommission", {"namespace": "payments-live-dev", "reason": "done with it"}, "namespace"),
    ],
)
def test_every_kind_of_request_can_be_submitted(api_world, kind, payload, setup):
    if setup == "project":
        Project.objects.create(tenant=api_world.payments, name="billing")
    elif setup == "namespace":
        active_namespace(api_world)

    response = api(api_world.owner).post(
        REQUESTS, {"tenant": "payments", "kind": kind, "payload": payload}, format="json"
    )

    assert response.status_code == 201, response.json()
    assert response.json()["kind"] == kind


def test_payload_is_checked_by_the_same_rules_as_the_form(api_world):
    response = api(api_world.member).post(
        REQUESTS,
        {
            "tenant": "payments",
            "kind": "namespace",
            "payload": {**NAMESPACE, "app": "Bad_Name", "cpu": "plenty"},
        },
        format="json",
    )

    body = assert_problem(response, 400, "validation-error")
    assert set(body["errors"]) == {"payload.app", "payload.cpu"}
    assert "not a Kubernetes quantity" in body["errors"]["payload.cpu"][0]
    assert not Request.objects.exists()


def test_over_budget_is_a_validation_error_with_the_numbers(api_world):
    Tenant.objects.filter(pk=api_world.payments.pk).update(budget_cpu_millis=400)
    response = api(api_world.member).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )
    body = assert_problem(response, 400, "validation-error")
    assert any("budget" in message for messages in body["errors"].values() for message in messages)


def test_viewer_is_denied_by_the_approval_policy(api_world):
    response = api(api_world.viewer).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )
    body = assert_problem(response, 403, "forbidden")
    assert "Viewers cannot make requests" in body["detail"]


@pytest.mark.parametrize("slug", ["search", "no-such-tenant"])
def test_requesting_for_a_tenant_you_are_not_in_is_404(api_world, slug):
    response = api(api_world.member).post(
        REQUESTS, {"tenant": slug, "kind": "namespace", "payload": NAMESPACE}, format="json"
    )
    assert_problem(response, 404, "not-found")


# --- reading -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "visible"),
    [
        ("admin", {"payments", "search"}),
        ("owner", {"payments"}),
        ("member", {"payments"}),
        ("viewer", {"payments"}),
        ("outsider", {"search"}),
    ],
)
def test_request_list_is_scoped_to_your_tenants(api_world, who, visible):
    submit(api_world, app="one")
    submit(api_world, app="two", tenant=api_world.search, requester=api_world.outsider)

    body = api(getattr(api_world, who)).get(REQUESTS).json()

    assert body["count"] == len(visible)
    assert {item["tenant"] for item in body["results"]} == visible


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("admin", 200),
        ("owner", 200),
        ("member", 200),
        ("viewer", 200),
        ("outsider", 404),
    ],
)
def test_request_detail_is_404_outside_your_tenants(api_world, who, status):
    tenancy_request = submit(api_world, tier="prod")
    response = api(getattr(api_world, who)).get(f"{REQUESTS}{tenancy_request.pk}/")
    assert response.status_code == status
    if status == 404:
        assert_problem(response, 404, "not-found")


def test_request_detail_has_plan_approvals_comments_history_and_permissions(api_world):
    tenancy_request = submit(api_world, tier="prod")
    services.add_comment(request_id=tenancy_request.pk, author=api_world.owner, body="LGTM")

    body = api(api_world.admin).get(f"{REQUESTS}{tenancy_request.pk}/").json()

    assert body["state"] == "submitted" and body["state_label"] == "Awaiting approval"
    assert body["plan"]["digest"] == review(tenancy_request).digest
    assert body["plan"]["objects"][0]["kind"] == "Namespace"
    assert body["comments"] == [
        {
            "id": body["comments"][0]["id"],
            "author": "olivia",
            "body": "LGTM",
            "created_at": body["comments"][0]["created_at"],
        }
    ]
    assert body["history"][0]["action"] == "request.submit"
    assert body["permissions"] == {"may_decide": True, "may_cancel": True, "may_retry": False}


def test_a_decided_request_has_no_future_plan(api_world):
    tenancy_request = submit(api_world, tier="prod")
    services.cancel_request(request_id=tenancy_request.pk, actor=api_world.member)
    body = api(api_world.member).get(f"{REQUESTS}{tenancy_request.pk}/").json()
    assert body["plan"] is None and body["state"] == "cancelled"


@pytest.mark.parametrize(
    ("query", "apps"),
    [
        ({"state": "submitted"}, {"prod-app"}),
        ({"state": "approved"}, {"dev-app"}),
        ({"tier": "prod"}, {"prod-app"}),
        ({"kind": "project"}, set()),
        ({"tenant": "payments"}, {"dev-app", "prod-app"}),
        ({"older_than": "1d"}, set()),
    ],
)
def test_requests_are_filtered_with_the_dashboards_filterset(api_world, query, apps):
    submit(api_world, tier="dev", app="dev-app")
    submit(api_world, tier="prod", app="prod-app")
    body = api(api_world.member).get(REQUESTS, query).json()
    assert {item["payload"]["app"] for item in body["results"]} == apps


def test_filtering_by_a_tenant_you_cannot_see_is_a_validation_error(api_world):
    response = api(api_world.member).get(REQUESTS, {"tenant": "search"})
    assert "tenant" in assert_problem(response, 400, "validation-error")["errors"]


def test_requests_are_ordered_newest_first_unless_asked(api_world):
    first, second = submit(api_world, app="one"), submit(api_world, app="two")
    client = api(api_world.member)
    assert [r["id"] for r in client.get(REQUESTS).json()["results"]] == [second.pk, first.pk]
    ordered = client.get(REQUESTS, {"ordering": "created_at"}).json()["results"]
    assert [r["id"] for r in ordered] == [first.pk, second.pk]
    several = client.get(REQUESTS, {"ordering": "kind,-id"}).json()["results"]
    assert [r["id"] for r in several] == [second.pk, first.pk]


def test_an_ordering_the_list_cannot_sort_by_is_refused_naming_what_it_can(api_world):
    """Not quietly replaced by the default order: a program paging through it would get
    rows in an order it did not ask for."""
    submit(api_world, app="one")
    response = api(api_world.member).get(REQUESTS, {"ordering": "requester__password,-id"})

    [message] = assert_problem(response, 400)["errors"]["ordering"]
    assert "'requester__password'" in message and "'-id'" not in message
    assert "created_at, id, kind, state, updated_at" in message
    # What is echoed back is cut short.
    long = api(api_world.member).get(REQUESTS, {"ordering": "x" * 5000})
    assert len(assert_problem(long, 400)["errors"]["ordering"][0]) < 300


def test_pages_hold_page_size_items_at_most_200(api_world):
    Request.objects.bulk_create(
        [
            Request(
                tenant=api_world.payments, kind="namespace", payload={}, requester=api_world.member
            )
            for _ in range(205)
        ]
    )
    client = api(api_world.member)
    page = client.get(REQUESTS, {"page_size": 2}).json()
    assert page["count"] == 205 and len(page["results"]) == 2 and "page=2" in page["next"]
    assert len(client.get(REQUESTS).json()["results"]) == 50
    assert len(client.get(REQUESTS, {"page_size": 1000}).json()["results"]) == 200
    assert_problem(client.get(REQUESTS, {"page": 99}), 404, "not-found")
