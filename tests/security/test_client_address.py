"""Whose address an audit event records: behind the chart's Ingress (BERTH_NUM_PROXIES
trusted proxies) the address the Ingress saw, not the Ingress's own; with no proxy
trusted, a client's X-Forwarded-For is ignored (anyone can send one). Pages, the API and
the API's throttling read it through one function (tenants.client_address)."""

from __future__ import annotations

import pytest

from tenants.api.throttling import ApiRateThrottle
from tenants.models import AuditEvent
from tests.support.api import NAMESPACE, api

REQUESTS = "/api/v1/requests/"
PROXY = "10.0.0.2"  # the Ingress controller, as the web process sees it
PERSON = "203.0.113.7"


@pytest.fixture
def proxies(settings):
    def trust(count: int) -> None:
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": count}

    return trust


def submitted_from(api_world, forwarded: str | None) -> str | None:
    headers = {"REMOTE_ADDR": PROXY}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    response = api(api_world.member).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
        **headers,
    )
    assert response.status_code == 201, response.content[:300]
    return AuditEvent.objects.get(action="request.submit").source_ip


def test_behind_one_trusted_proxy_the_event_records_the_person_not_the_proxy(api_world, proxies):
    proxies(1)

    assert submitted_from(api_world, PERSON) == PERSON


def test_a_forged_hop_before_the_proxys_own_entry_is_not_taken(api_world, proxies):
    proxies(1)

    assert submitted_from(api_world, f"198.51.100.66, {PERSON}") == PERSON


def test_with_no_proxy_trusted_a_clients_header_is_ignored(api_world, proxies):
    proxies(0)

    assert submitted_from(api_world, PERSON) == PROXY


def test_an_entry_that_is_not_an_address_falls_back_to_the_connection(api_world, proxies):
    proxies(1)

    assert submitted_from(api_world, "<script>") == PROXY


def test_a_page_form_records_the_same_address(api_world, proxies, client):
    proxies(1)
    client.force_login(api_world.member)

    response = client.post(
        "/tenants/payments/request/namespace/",
        {"app": "shop", "tier": "dev", "cluster": "sandbox", "cpu": "500m", "memory": "512Mi"},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=PERSON,
    )

    assert response.status_code == 302, response.content[:500]
    assert AuditEvent.objects.get(action="request.submit").source_ip == PERSON


def test_anonymous_callers_are_throttled_by_the_same_address(api_world, proxies, rf):
    proxies(1)
    request = rf.get("/api/v1/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=PERSON)
    request.user, request.auth = None, None

    assert ApiRateThrottle().get_cache_key(request, view=None) == f"throttle:api:ip:{PERSON}"
