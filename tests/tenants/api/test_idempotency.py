"""Idempotency-Key on the API's POSTs: the same key and body replay the first answer (errors
too), another body is 422, a key in flight is 409 (also between two real HTTP requests at
once), keys are per user and forgotten after a day."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.response import Response

from tenants.api import idempotency
from tenants.models import IdempotencyRecord, Namespace, NamespaceClaim, Request, User
from tests.support.api import api, assert_problem, submit, token_for
from tests.support.tenants_api import REQUESTS, namespace_request

# --- Idempotency-Key -----------------------------------------------------------------------


def post_with_key(client, key, body):
    return client.post(REQUESTS, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_the_same_key_and_body_replays_the_first_answer(api_world):
    client = api(api_world.member)
    first = post_with_key(client, "key-1", namespace_request())
    again = post_with_key(client, "key-1", namespace_request())

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert Request.objects.count() == 1


def test_the_same_key_with_another_body_is_422(api_world):
    client = api(api_world.member)
    post_with_key(client, "key-1", namespace_request())
    response = post_with_key(client, "key-1", namespace_request(app="other"))
    assert_problem(response, 422, "idempotency-key-reused")
    assert Request.objects.count() == 1


def test_an_error_answer_is_replayed_too(api_world):
    client = api(api_world.member)
    first = post_with_key(client, "key-1", namespace_request(app="Bad_Name"))
    again = post_with_key(client, "key-1", namespace_request(app="Bad_Name"))
    assert first.status_code == again.status_code == 400
    assert_problem(again, 400, "validation-error")
    assert again.json() == first.json()


def test_a_key_still_in_flight_is_409(api_world):
    client = api(api_world.member)
    body = namespace_request()
    # The first request with this key is being answered right now (its record has no status).
    post_with_key(client, "busy", body)
    IdempotencyRecord.objects.filter(key="busy").update(status_code=None, response_body="")

    assert_problem(post_with_key(client, "busy", body), 409, "idempotency-key-in-use")


def test_an_abandoned_key_is_taken_over(api_world):
    client = api(api_world.member)
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


def test_keys_are_per_user(api_world):
    post_with_key(api(api_world.member), "shared", namespace_request(app="one"))
    response = post_with_key(api(api_world.owner), "shared", namespace_request(app="two"))
    assert response.status_code == 201
    assert Request.objects.count() == 2


def test_keys_are_forgotten_after_24_hours(api_world):
    client = api(api_world.member)
    post_with_key(client, "old", namespace_request(app="one"))
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert post_with_key(client, "old", namespace_request(app="two")).status_code == 201
    assert IdempotencyRecord.objects.count() == 1


def test_the_key_fingerprints_the_path_too(api_world):
    tenancy_request = submit(api_world, tier="prod")
    client = api(api_world.member)
    client.post(
        f"{REQUESTS}{tenancy_request.pk}/comment/",
        {"body": "hi"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    response = client.post(REQUESTS, {"body": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert_problem(response, 422)


@pytest.mark.parametrize("key", ["", "x" * 256, "naïve"])
def test_a_bad_key_is_400(api_world, key):
    response = post_with_key(api(api_world.member), key, namespace_request())
    assert "Idempotency-Key" in assert_problem(response, 400)["errors"]


def test_a_refused_request_claims_no_key(api_world):
    response = post_with_key(api(api_world.member, scopes=["read"]), "k", namespace_request())
    assert response.status_code == 403
    assert not IdempotencyRecord.objects.exists()


def test_a_server_error_releases_the_key(api_world):
    record = IdempotencyRecord.objects.create(user=api_world.member, key="k", fingerprint="f")
    idempotency.finish(record, Response({"oops": 1}, status=500))
    assert not IdempotencyRecord.objects.exists()


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
