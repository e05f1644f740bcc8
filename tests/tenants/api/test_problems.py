"""Errors are problem details with the right status; bad input is never a server error."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404

from tenants.api.exceptions import problem_handler
from tenants.errors import DomainError, IllegalTransition, NotAllowed
from tenants.models import Request
from tests.support.api import api, assert_problem, submit
from tests.support.tenants_api import REQUESTS, namespace_request

# --- the problem format --------------------------------------------------------------------


def test_a_validation_problem_names_each_field(api_world):
    response = api(api_world.member).post(REQUESTS, {"kind": "gold"}, format="json")
    body = assert_problem(response, 400, "validation-error")
    assert set(body["errors"]) == {"tenant", "kind", "payload"}
    assert body["instance"] == REQUESTS
    assert body["title"] == "Your request is not valid."
    assert body["detail"].startswith("Invalid fields:")


@pytest.mark.parametrize(
    ("exc", "status", "slug"),
    [
        (
            IllegalTransition(request_id=1, state_label="Ready", action="approved"),
            409,
            "illegal-transition",
        ),
        (NotAllowed("no"), 403, "forbidden"),
        (DomainError("You have already approved this plan."), 409, "conflict"),
        (DjangoValidationError({"slug": ["taken"]}), 400, "validation-error"),
        (DjangoValidationError("bad"), 400, "validation-error"),
        (PermissionDenied("no"), 403, "forbidden"),
        (Http404(), 404, "not-found"),
    ],
)
def test_domain_and_django_errors_map_to_statuses(rf, exc, status, slug):
    request = rf.get("/api/v1/x/")
    response = problem_handler(exc, {"request": request, "view": None})
    assert response.status_code == status
    assert response.content_type == "application/problem+json"
    assert response.data["type"] == f"/api/problems/{slug}"
    assert response.data["instance"] == "/api/v1/x/"
    if isinstance(exc, DjangoValidationError):
        assert response.data["errors"]


def test_problem_types_are_described_at_their_uri(client):
    body = client.get("/api/problems/illegal-transition").json()
    assert body["type"] == "/api/problems/illegal-transition" and body["description"]
    assert client.get("/api/problems/nonsense").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nope/",
        "/api/v1/requests",
        "/api/v2/requests/",
        "/api/v1/requests/abc/",
        "/api/v1/requests/-1/",
        "/api/v1/requests/99999999999999999999999/",
    ],
)
def test_unknown_api_paths_are_404_problems(api_world, path):
    assert_problem(api(api_world.member).get(path), 404, "not-found")


def test_a_huge_id_in_range_of_the_url_is_just_not_found(api_world):
    assert_problem(api(api_world.member).get("/api/v1/requests/999999999999999999/"), 404)
    assert_problem(api(api_world.member).get("/api/v1/namespaces/999999999999999999/"), 404)


def test_method_not_allowed_is_405(api_world):
    tenancy_request = submit(api_world, tier="prod")
    assert_problem(
        api(api_world.admin).delete(f"{REQUESTS}{tenancy_request.pk}/"), 405, "method-not-allowed"
    )


# --- bad input is a 4xx, never a 500 -------------------------------------------------------


def test_malformed_json_is_400(api_world):
    response = api(api_world.member).post(
        REQUESTS, '{"tenant": "payments",', content_type="application/json"
    )
    assert_problem(response, 400, "malformed-request")


def test_form_encoded_bodies_are_415(api_world):
    response = api(api_world.member).post(REQUESTS, {"tenant": "payments"})  # multipart
    assert_problem(response, 415, "unsupported-media-type")


@pytest.mark.parametrize(
    "body",
    [
        [],
        "a string",
        42,
        None,
        {"tenant": ["payments"], "kind": {}, "payload": []},
        {"tenant": "payments", "kind": "namespace", "payload": "app=shop"},
        {"tenant": "payments", "kind": "nonsense", "payload": {}},
        {"tenant": "x" * 10000, "kind": "namespace", "payload": {}},
    ],
)
def test_wrong_shapes_and_types_are_400(api_world, body):
    import json

    response = api(api_world.member).post(
        REQUESTS, json.dumps(body), content_type="application/json"
    )
    assert_problem(response, 400)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cpu", "1e400"),
        ("cpu", "Infinity"),
        ("cpu", "NaN"),
        ("cpu", "-1"),
        ("cpu", 10**400),
        ("memory", 1e308),
        ("cpu", True),
        ("cpu", {"a": 1}),
        ("cpu", [1]),
        ("storage", "99999999999999999999Ei"),
        ("memory", "1e99999999999"),
        ("app", "сервис"),
        ("app", "shop\u0000"),
        ("app", "🚀"),
        ("app", "a" * 10000),
        ("tier", None),
        ("cluster", 12),
    ],
)
def test_odd_payload_values_are_400(api_world, field, value):
    import json

    body = json.dumps(namespace_request(**{field: value}))
    response = api(api_world.member).post(REQUESTS, body, content_type="application/json")
    assert_problem(response, 400, "validation-error")
    assert not Request.objects.exists()


def test_unicode_text_is_kept(api_world):
    tenancy_request = submit(api_world, tier="prod")
    response = api(api_world.member).post(
        f"{REQUESTS}{tenancy_request.pk}/comment/", {"body": "Grüße, 世界 🚀"}, format="json"
    )
    assert response.status_code == 201 and response.json()["body"] == "Grüße, 世界 🚀"


@pytest.mark.parametrize(
    "query",
    [
        {"page": "abc"},
        {"page": "-1"},
        {"page": "1" * 5000},
        {"page_size": "-3"},
        {"page_size": "9" * 5000},
        {"state": "gold"},
        {"tier": "x" * 500},
        {"ordering": "-" * 300},
        {"older_than": "forever"},
        {"tenant": "\u0000"},
    ],
)
def test_odd_query_strings_are_4xx(api_world, query):
    assert api(api_world.member).get(REQUESTS, query).status_code in {200, 400, 404}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("page_size=0.5", "page_size"),
        ("page_size=false", "page_size"),
        ("page_size=", "page_size"),
        ("page_size=0", "page_size"),
        ("page_size=2&page_size=3", "page_size"),
        ("page=null", "page"),
        ("state=", "state"),
        ("kind=&state=", "kind"),
        ("tenant=payments&tenant=search", "tenant"),
        ("ordering=", "ordering"),
        ("ordering=id&ordering=-id", "ordering"),
        ("ordering=id,,kind", "ordering"),
        ("ordering=--id", "ordering"),
    ],
)
def test_a_paging_or_filter_value_the_schema_refuses_is_a_400_naming_it(api_world, query, field):
    response = api(api_world.member).get(f"{REQUESTS}?{query}")
    assert field in assert_problem(response, 400)["errors"]
