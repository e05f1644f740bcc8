"""What an API token may do: only what its scopes say (read, request, approve, admin), and
who it acts as (/api/v1/me/).

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tests.support.api import NAMESPACE, api, assert_problem, submit
from tests.support.tenants_api import REQUESTS, approve

# --- token scopes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scopes", "method", "path", "status"),
    [
        (["read"], "get", "requests", 200),
        (["read"], "post", "submit", 403),
        (["request"], "get", "requests", 403),
        (["request"], "post", "submit", 201),
        (["read", "request"], "post", "approve", 403),
        (["approve"], "post", "approve", 200),
        (["approve"], "post", "submit", 403),
        (["read", "request", "approve"], "post", "tenants", 403),
        (["admin"], "post", "tenants", 201),
    ],
)
def test_a_token_can_do_only_what_its_scopes_say(api_world, scopes, method, path, status):
    pending = submit(api_world, tier="prod")
    client = api(api_world.admin, scopes=scopes)
    if path == "requests":
        response = client.get(REQUESTS)
    elif path == "submit":
        response = client.post(
            REQUESTS,
            {"tenant": "payments", "kind": "namespace", "payload": {**NAMESPACE, "app": "other"}},
            format="json",
        )
    elif path == "approve":
        pending = submit(api_world, tier="prod", app="approve-me")
        response = approve(client, pending)
    else:
        response = client.post(
            "/api/v1/tenants/", {"slug": "newteam", "name": "New"}, format="json"
        )
    assert response.status_code == status, response.json()
    if status == 403:
        assert "scope" in assert_problem(response, 403, "forbidden")["detail"]


# --- who am I ------------------------------------------------------------------------------


def test_me_tells_who_the_token_acts_as_and_its_scopes(api_world):
    body = api(api_world.owner, scopes=["read"]).get("/api/v1/me/").json()
    assert body["username"] == "olivia" and body["authentication"] == "api_token"
    assert body["scopes"] == ["read"] and body["memberships"] == [
        {"tenant": "payments", "role": "owner"}
    ]
