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
def test_audit_events_are_for_platform_admins_and_tenant_owners(world, who, status, tenants):
    submit(world, app="one")
    submit(world, app="two", tenant=world.search, requester=world.outsider)
    response = api(getattr(world, who)).get("/api/v1/audit-events/")
    assert response.status_code == status
    if tenants is not None:
        seen = {event["tenant"] for event in response.json()["results"]} - {None}  # tokens
        assert seen == tenants


def test_audit_events_filter_with_the_audit_filterset(world):
    tenancy_request = submit(world, tier="prod")
    approve_if_needed(tenancy_request, approver=world.admin)
    body = (
        api(world.admin)
        .get("/api/v1/audit-events/", {"action": "request.app", "actor": "pat"})
        .json()
    )
    assert [event["action"] for event in body["results"]] == ["request.approve"]
    assert_problem(api(world.admin).get("/api/v1/audit-events/", {"since": "yesterday"}), 400)


def test_owner_of_another_tenant_does_not_see_payments_events(world):
    Membership.objects.filter(user=world.outsider).update(role=Role.OWNER)
    submit(world, app="one")
    body = api(world.outsider).get("/api/v1/audit-events/").json()
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


def test_audit_pages_follow_next_to_the_end_newest_or_oldest_first(world):
    notes(12, tenant=world.payments)
    client = api(world.admin)
    newest = follow(client, "/api/v1/audit-events/", page_size=5, tenant="payments")
    oldest = follow(client, "/api/v1/audit-events/", page_size=5, ordering="created_at")
    ids = [event["id"] for event in newest]
    assert len(ids) == len(set(ids)) == AuditEvent.objects.filter(tenant=world.payments).count()
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
def test_audit_page_parameters_berth_cannot_follow_are_refused(world, params, field):
    body = assert_problem(api(world.admin).get("/api/v1/audit-events/", params), 400)
    assert field in body["errors"], body


@pytest.mark.parametrize("count", [3, 40])
def test_an_audit_page_costs_the_same_queries_however_long_the_log(
    world, count, django_assert_num_queries
):
    notes(count, tenant=world.payments)
    client = api(world.admin)
    first = client.get("/api/v1/audit-events/", {"page_size": 2}).json()
    with django_assert_num_queries(3) as queries:
        assert client.get(first["next"]).status_code == 200
    assert not any("COUNT(" in query["sql"].upper() for query in queries.captured_queries)
