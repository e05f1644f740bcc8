"""Errors are problem details with the right status; bad input is never a server error;
Idempotency-Key replays; throttling answers 429 with Retry-After."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.utils import timezone
from rest_framework.response import Response
from rest_framework.test import APIClient

from tenants.api import idempotency
from tenants.api.exceptions import problem_handler
from tenants.errors import DomainError, IllegalTransition, NotAllowed
from tenants.models import IdempotencyRecord, Namespace, NamespaceClaim, Request, User
from tests.support.api import NAMESPACE, api, assert_problem, submit, token_for

REQUESTS = "/api/v1/requests/"


def namespace_request(**payload) -> dict:
    return {"tenant": "payments", "kind": "namespace", "payload": {**NAMESPACE, **payload}}


# --- the problem format --------------------------------------------------------------------


def test_a_validation_problem_names_each_field(world):
    response = api(world.member).post(REQUESTS, {"kind": "gold"}, format="json")
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
def test_unknown_api_paths_are_404_problems(world, path):
    assert_problem(api(world.member).get(path), 404, "not-found")


def test_a_huge_id_in_range_of_the_url_is_just_not_found(world):
    assert_problem(api(world.member).get("/api/v1/requests/999999999999999999/"), 404)
    assert_problem(api(world.member).get("/api/v1/namespaces/999999999999999999/"), 404)


def test_method_not_allowed_is_405(world):
    tenancy_request = submit(world, tier="prod")
    assert_problem(
        api(world.admin).delete(f"{REQUESTS}{tenancy_request.pk}/"), 405, "method-not-allowed"
    )


# --- bad input is a 4xx, never a 500 -------------------------------------------------------


def test_malformed_json_is_400(world):
    response = api(world.member).post(
        REQUESTS, '{"tenant": "payments",', content_type="application/json"
    )
    assert_problem(response, 400, "malformed-request")


def test_form_encoded_bodies_are_415(world):
    response = api(world.member).post(REQUESTS, {"tenant": "payments"})  # multipart
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
def test_wrong_shapes_and_types_are_400(world, body):
    import json

    response = api(world.member).post(REQUESTS, json.dumps(body), content_type="application/json")
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
def test_odd_payload_values_are_400(world, field, value):
    import json

    body = json.dumps(namespace_request(**{field: value}))
    response = api(world.member).post(REQUESTS, body, content_type="application/json")
    assert_problem(response, 400, "validation-error")
    assert not Request.objects.exists()


def test_unicode_text_is_kept(world):
    tenancy_request = submit(world, tier="prod")
    response = api(world.member).post(
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
def test_odd_query_strings_are_4xx(world, query):
    assert api(world.member).get(REQUESTS, query).status_code in {200, 400, 404}


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
def test_a_paging_or_filter_value_the_schema_refuses_is_a_400_naming_it(world, query, field):
    response = api(world.member).get(f"{REQUESTS}?{query}")
    assert field in assert_problem(response, 400)["errors"]


# --- Idempotency-Key -----------------------------------------------------------------------


def post_with_key(client, key, body):
    return client.post(REQUESTS, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_the_same_key_and_body_replays_the_first_answer(world):
    client = api(world.member)
    first = post_with_key(client, "key-1", namespace_request())
    again = post_with_key(client, "key-1", namespace_request())

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert Request.objects.count() == 1


def test_the_same_key_with_another_body_is_422(world):
    client = api(world.member)
    post_with_key(client, "key-1", namespace_request())
    response = post_with_key(client, "key-1", namespace_request(app="other"))
    assert_problem(response, 422, "idempotency-key-reused")
    assert Request.objects.count() == 1


def test_an_error_answer_is_replayed_too(world):
    client = api(world.member)
    first = post_with_key(client, "key-1", namespace_request(app="Bad_Name"))
    again = post_with_key(client, "key-1", namespace_request(app="Bad_Name"))
    assert first.status_code == again.status_code == 400
    assert_problem(again, 400, "validation-error")
    assert again.json() == first.json()


def test_a_key_still_in_flight_is_409(world):
    client = api(world.member)
    body = namespace_request()
    # The first request with this key is being answered right now (its record has no status).
    post_with_key(client, "busy", body)
    IdempotencyRecord.objects.filter(key="busy").update(status_code=None, response_body="")

    assert_problem(post_with_key(client, "busy", body), 409, "idempotency-key-in-use")


def test_an_abandoned_key_is_taken_over(world):
    client = api(world.member)
    body = namespace_request(tier="prod")
    post_with_key(client, "crashed", body)
    # As if the first request never got that far (so its names were never claimed either).
    NamespaceClaim.objects.filter(request__isnull=False).delete()
    Namespace.objects.all().delete()
    Request.objects.all().delete()
    IdempotencyRecord.objects.filter(key="crashed").update(
        status_code=None, created_at=timezone.now() - timedelta(minutes=5)
    )
    assert post_with_key(client, "crashed", body).status_code == 201


def test_keys_are_per_user(world):
    post_with_key(api(world.member), "shared", namespace_request(app="one"))
    response = post_with_key(api(world.owner), "shared", namespace_request(app="two"))
    assert response.status_code == 201
    assert Request.objects.count() == 2


def test_keys_are_forgotten_after_24_hours(world):
    client = api(world.member)
    post_with_key(client, "old", namespace_request(app="one"))
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert post_with_key(client, "old", namespace_request(app="two")).status_code == 201
    assert IdempotencyRecord.objects.count() == 1


def test_the_key_fingerprints_the_path_too(world):
    tenancy_request = submit(world, tier="prod")
    client = api(world.member)
    client.post(
        f"{REQUESTS}{tenancy_request.pk}/comment/",
        {"body": "hi"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    response = client.post(REQUESTS, {"body": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert_problem(response, 422)


@pytest.mark.parametrize("key", ["", "x" * 256, "naïve"])
def test_a_bad_key_is_400(world, key):
    response = post_with_key(api(world.member), key, namespace_request())
    assert "Idempotency-Key" in assert_problem(response, 400)["errors"]


def test_a_refused_request_claims_no_key(world):
    response = post_with_key(api(world.member, scopes=["read"]), "k", namespace_request())
    assert response.status_code == 403
    assert not IdempotencyRecord.objects.exists()


def test_a_server_error_releases_the_key(world):
    record = IdempotencyRecord.objects.create(user=world.member, key="k", fingerprint="f")
    idempotency.finish(record, Response({"oops": 1}, status=500))
    assert not IdempotencyRecord.objects.exists()


# --- throttling ----------------------------------------------------------------------------


@pytest.fixture
def three_a_minute(settings):
    settings.BERTH_API_RATE = "3/min"
    # A cache of this test's own: counters from other tests (or a Redis) do not leak in.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"throttle-test-{id(settings)}",
        }
    }


def test_past_the_rate_a_token_gets_429_with_retry_after(world, three_a_minute):
    client = api(world.member)
    assert [client.get("/api/v1/me/").status_code for _ in range(3)] == [200] * 3

    response = client.get("/api/v1/me/")

    assert_problem(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 60
    # Another token of the same person has its own budget.
    assert api(token=token_for(world.member)).get("/api/v1/me/").status_code == 200


def test_sessions_are_throttled_per_user(world, three_a_minute):
    client = APIClient()
    client.force_login(world.member)
    statuses = [client.get("/api/v1/me/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_anonymous_callers_are_throttled_per_address(db, three_a_minute):
    client = APIClient()
    statuses = [client.get("/api/schema/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    other = APIClient(REMOTE_ADDR="10.9.8.7")
    assert other.get("/api/schema/").status_code == 200


@pytest.mark.parametrize("backend", ["locmem", "redis"])
def test_a_window_ends_a_period_after_its_first_request_and_counts_afresh(world, settings, backend):
    """One counter per caller and window, in whichever cache the web processes share."""
    import os
    import time
    import uuid

    if backend == "redis":
        if not os.environ.get("REDIS_URL"):
            pytest.skip("needs Redis (set REDIS_URL): the counters all web processes share")
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": os.environ["REDIS_URL"],
                "KEY_PREFIX": f"throttle-{uuid.uuid4()}",
            }
        }
    else:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "LOCATION": f"window-{uuid.uuid4()}",
            }
        }
    settings.BERTH_API_RATE = "2/s"
    client = api(world.member)
    assert [client.get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 429]
    assert client.get("/api/v1/me/")["Retry-After"] == "1"
    time.sleep(1.1)
    assert [client.get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 429]


@pytest.mark.django_db(transaction=True)
def test_a_concurrent_duplicate_gets_409_while_the_first_is_answered(
    live_server, monkeypatch, settings
):
    """Two real HTTP requests with one key at once: the second arrives mid-way through the
    first (whose service is slowed down) and is told to wait; then the answer is replayed."""
    import threading
    import time

    import requests as http

    from tenants import demo, services

    settings.BERTH_API_RATE = "100000/min"
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    token = token_for(User.objects.get(username="dev"))
    submit_request = services.submit_request
    started = threading.Event()

    def slow_submit(**kwargs):
        started.set()
        time.sleep(1.0)
        return submit_request(**kwargs)

    monkeypatch.setattr(services, "submit_request", slow_submit)
    url = f"{live_server.url}{REQUESTS}"
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "at-once"}
    body = namespace_request()
    first: dict = {}
    worker = threading.Thread(
        target=lambda: first.setdefault(
            "response", http.post(url, json=body, headers=headers, timeout=30)
        )
    )
    worker.start()
    assert started.wait(10)

    duplicate = http.post(url, json=body, headers=headers, timeout=30)

    worker.join()
    assert duplicate.status_code == 409
    assert duplicate.headers["Content-Type"] == "application/problem+json"
    assert duplicate.json()["type"] == "/api/problems/idempotency-key-in-use"
    assert first["response"].status_code == 201
    replayed = http.post(url, json=body, headers=headers, timeout=30)
    assert replayed.status_code == 201 and replayed.headers["Idempotent-Replayed"] == "true"
    assert Request.objects.count() == 1
