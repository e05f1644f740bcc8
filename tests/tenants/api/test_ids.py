"""Ids in API URLs: a non-numeric, unknown or invisible id is 404 on every endpoint, before
any check of roles or token scopes could tell an existing object from a missing one."""

import pytest
from rest_framework.test import APIClient

from tenants import demo, services
from tenants.models import Tenant, User
from tests.support.workflow import ask_for_namespace


@pytest.fixture
def ids_world(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    search = Tenant.objects.get(slug="search")
    sam = User.objects.get(username="sam")
    theirs = ask_for_namespace(search, sam, app="index", tier="prod", cpu="1", memory="1Gi")
    developer = User.objects.get(username="dev")
    _, read_only = services.create_api_token(user=developer, name="ro", scopes=["read"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {read_only}")
    return {"api": api, "theirs": theirs}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/requests/abc/",
        "/api/v1/requests/999999/",
        "/api/v1/requests/999999/runs/",
        "/api/v1/namespaces/abc/",
        "/api/v1/namespaces/999999/",
        "/api/v1/projects/999999/",
        "/api/v1/projects/999999/environments/",
        "/api/v1/environments/999999/",
        "/api/v1/audit-events/999999/",
        "/api/v1/clusters/sandbox/",
        "/api/v1/clusters/nope/",
        "/api/v1/tiers/nope/",
        "/api/v1/tenants/nope/",
        "/api/v1/tenants/search/",
        "/api/v1/tenants/search/environment-rules/",
    ],
)
def test_reading_what_is_not_there_or_not_yours_is_404(ids_world, path):
    response = ids_world["api"].get(path)
    assert response.status_code == 404, path
    assert response.json()["type"] == "/api/problems/not-found"


@pytest.mark.parametrize("action", ["approve", "reject", "cancel", "retry", "comment"])
def test_acting_on_an_unknown_or_foreign_request_is_404_even_without_the_scope(ids_world, action):
    """The read-only token lacks the scope for each of these: were the scope checked first,
    the answer would be 403 for every id and 404 would leak nothing; checked after
    visibility, a request of another tenant and a missing one both answer 404."""
    api = ids_world["api"]
    for pk in ("999999", str(ids_world["theirs"].pk)):
        response = api.post(f"/api/v1/requests/{pk}/{action}/", {}, format="json")
        assert response.status_code == 404, (action, pk)


def test_a_visible_request_still_needs_the_scope(ids_world):
    developer = User.objects.get(username="dev")
    payments = Tenant.objects.get(slug="payments")
    mine = ask_for_namespace(payments, developer, app="shop", tier="prod", cpu="1", memory="1Gi")
    response = ids_world["api"].post(f"/api/v1/requests/{mine.pk}/cancel/", {}, format="json")
    assert response.status_code == 403
    assert "lacks the 'request' scope" in response.json()["detail"]
