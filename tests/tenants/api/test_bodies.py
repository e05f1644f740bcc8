"""What the API does with bodies it cannot take: too deep (400), too long (413), not JSON
(415): each a problem+json answer that saves nothing, never a 500."""

import json

import pytest
from rest_framework.test import APIClient

from tenants import demo
from tenants.models import Request, User

REQUESTS = "/api/v1/requests/"


@pytest.fixture
def client(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    api = APIClient()
    api.force_authenticate(User.objects.get(username="dev"))
    return api


def problem(response) -> dict:
    assert response["Content-Type"] == "application/problem+json"
    return response.json()


@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_a_body_nested_5000_levels_deep_is_a_400(client, opening):
    closing = "]" if opening == "[" else "}"
    response = client.post(
        REQUESTS, opening * 5000 + "1" + closing * 5000, content_type="application/json"
    )
    assert response.status_code == 400
    body = problem(response)
    assert body["type"] == "/api/problems/malformed-request"
    assert "nests deeper than the API reads (32 levels at most)" in body["detail"]
    assert not Request.objects.exists()


def test_brackets_inside_strings_do_not_count_as_nesting(client):
    response = client.post(
        REQUESTS,
        json.dumps(
            {
                "tenant": "payments",
                "kind": "namespace",
                "payload": {
                    "app": "[" * 1000 + '\\"{' * 500,
                    "tier": "dev",
                    "cluster": "sandbox",
                    "cpu": "1",
                    "memory": "1Gi",
                },
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "payload.app" in problem(response)["errors"]  # refused as a name, not as nesting


def test_a_body_longer_than_the_limit_is_a_413(client, settings):
    settings.BERTH_API_MAX_BODY_BYTES = 10_000
    body = json.dumps({"tenant": "payments", "kind": "namespace", "payload": {"x": "a" * 20_000}})
    response = client.post(REQUESTS, body, content_type="application/json")
    assert response.status_code == 413
    found = problem(response)
    assert found["type"] == "/api/problems/payload-too-large"
    assert "10000 bytes at most" in found["detail"]
    assert not Request.objects.exists()


def test_a_long_body_is_refused_before_authentication(db, settings):
    """Even an anonymous caller's announced giant upload gets 413, not 401 after reading."""
    settings.BERTH_API_MAX_BODY_BYTES = 1000
    response = APIClient().post(REQUESTS, "x" * 5000, content_type="application/json")
    assert response.status_code == 413
    assert problem(response)["type"] == "/api/problems/payload-too-large"


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", "application/x-www-form-urlencoded"]
)
def test_a_body_that_is_not_json_is_a_415(client, content_type):
    response = client.post(REQUESTS, "tenant=payments", content_type=content_type)
    assert response.status_code == 415
    assert problem(response)["type"] == "/api/problems/unsupported-media-type"
    assert not Request.objects.exists()


def test_a_problem_type_page_explains_each_new_problem(client):
    for slug in ("payload-too-large", "malformed-request"):
        assert client.get(f"/api/problems/{slug}").json()["title"]


def test_text_that_is_not_unicode_is_a_400_not_a_500(client):
    """JSON may spell an unpaired surrogate (\\ud800); Python decodes it into a string that
    no database, log or UTF-8 answer can hold."""
    response = client.post(
        REQUESTS,
        '{"tenant": "payments", "kind": "namespace", "payload": {"app": "\\ud800"}}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "not valid Unicode" in problem(response)["detail"]
