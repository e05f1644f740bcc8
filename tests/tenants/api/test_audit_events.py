"""Audit events through the REST API (/api/v1/audit-events/): for platform admins and tenant
owners, each seeing only their tenants' events, filtered with the audit filterset.

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tenants.choices import Role
from tenants.models import AuditEvent, Membership
from tests.support.api import api, assert_problem, submit
from tests.support.audit_log import notes
from tests.support.workflow import approve_if_needed

# --- audit events --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status", "tenants"),
    [
        ("admin", 200, {"payments", "search"}),
        ("owner", 200, {"payments"}),
        ("member", 403, None),
        ("viewer", 403, None),
        ("outsider", 403, None),
    ],
)
def test_audit_events_are_for_platform_admins_and_tenant_owners(api_world, who, status, tenants):
    submit(api_world, app="one")
    submit(api_world, app="two", tenant=api_world.search, requester=api_world.outsider)
    response = api(getattr(api_world, who)).get("/api/v1/audit-events/")
    assert response.status_code == status
    if tenants is not None:
        seen = {event["tenant"] for event in response.json()["results"]} - {None}  # tokens
        assert seen == tenants


def test_audit_events_filter_with_the_audit_filterset(api_world):
    tenancy_request = submit(api_world, tier="prod")
    approve_if_needed(tenancy_request, approver=api_world.admin)
    body = (
        api(api_world.admin)
        .get("/api/v1/audit-events/", {"action": "request.app", "actor": "pat"})
        .json()
    )
    assert [event["action"] for event in body["results"]] == ["request.approve"]
    assert_problem(api(api_world.admin).get("/api/v1/audit-events/", {"since": "yesterday"}), 400)


def test_owner_of_another_tenant_does_not_see_payments_events(api_world):
    Membership.objects.filter(user=api_world.outsider).update(role=Role.OWNER)
    submit(api_world, app="one")
    body = api(api_world.outsider).get("/api/v1/audit-events/").json()
    assert all(event["tenant"] != "payments" for event in body["results"])


# --- pages: by cursor, never counted ---------------------------------------------------------


def follow(client, url: str, **params) -> list[dict]:
    """Every event the list gives, following `next` to its end."""
    events, response = [], client.get(url, params)
    while True:
        body = response.json()
        assert response.status_code == 200, body
        assert set(body) == {"next", "previous", "results"}  # no count: nothing counts the log
        events += body["results"]
        if body["next"] is None:
            return events
        response = client.get(body["next"])


def test_audit_pages_follow_next_to_the_end_newest_or_oldest_first(api_world):
    notes(12, tenant=api_world.payments)
    client = api(api_world.admin)
    newest = follow(client, "/api/v1/audit-events/", page_size=5, tenant="payments")
    oldest = follow(client, "/api/v1/audit-events/", page_size=5, ordering="created_at")
    ids = [event["id"] for event in newest]
    assert len(ids) == len(set(ids)) == AuditEvent.objects.filter(tenant=api_world.payments).count()
    assert [event["id"] for event in oldest] == [
        event.pk for event in AuditEvent.objects.order_by("created_at", "id")
    ]
    second = client.get("/api/v1/audit-events/", {"page_size": 5}).json()
    back = client.get(client.get(second["next"]).json()["previous"]).json()
    assert back["results"] == second["results"] and back["previous"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": "2"}, "page"),
        ({"cursor": "not-one-of-ours"}, "cursor"),
        ({"page_size": "0"}, "page_size"),
        ({"ordering": "id"}, "ordering"),
        ({"since": "2026-13-01"}, "since"),
    ],
)
def test_audit_page_parameters_berth_cannot_follow_are_refused(api_world, params, field):
    body = assert_problem(api(api_world.admin).get("/api/v1/audit-events/", params), 400)
    assert field in body["errors"], body


@pytest.mark.parametrize("count", [3, 40])
def test_an_audit_page_costs_the_same_queries_however_long_the_log(
    api_world, count, django_assert_num_queries
):
    notes(count, tenant=api_world.payments)
    client = api(api_world.admin)
    first = client.get("/api/v1/audit-events/", {"page_size": 2}).json()
    with django_assert_num_queries(3) as queries:
        assert client.get(first["next"]).status_code == 200
    assert not any("COUNT(" in query["sql"].upper() for query in queries.captured_queries)
