"""Throttling: past its rate a caller (a token, a session's user, an anonymous address) is
answered 429 with Retry-After, one counter per caller and window."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.support.api import api, assert_problem, token_for

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


def test_past_the_rate_a_token_gets_429_with_retry_after(api_world, three_a_minute):
    client = api(api_world.member)
    assert [client.get("/api/v1/me/").status_code for _ in range(3)] == [200] * 3

    response = client.get("/api/v1/me/")

    assert_problem(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 60
    # Another token of the same person has its own budget.
    assert api(token=token_for(api_world.member)).get("/api/v1/me/").status_code == 200


def test_sessions_are_throttled_per_user(api_world, three_a_minute):
    client = APIClient()
    client.force_login(api_world.member)
    statuses = [client.get("/api/v1/me/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_anonymous_callers_are_throttled_per_address(db, three_a_minute):
    client = APIClient()
    statuses = [client.get("/api/schema/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    other = APIClient(REMOTE_ADDR="10.9.8.7")
    assert other.get("/api/schema/").status_code == 200


@pytest.mark.parametrize("backend", ["locmem", "redis"])
def test_a_window_ends_a_period_after_its_first_request_and_counts_afresh(
    api_world, settings, backend
):
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
    client = api(api_world.member)
    assert [client.get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 429]
    assert client.get("/api/v1/me/")["Retry-After"] == "1"
    time.sleep(1.1)
    assert [client.get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 429]
