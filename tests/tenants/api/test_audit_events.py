"""Audit events through the REST API (/api/v1/audit-events/): for platform admins and tenant
owners, each seeing only their tenants' events, filtered with the audit filterset.

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tenants.choices import Role
from tenants.models import Membership
from tests.support.api import api, assert_problem, submit
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
