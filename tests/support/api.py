"""Helpers the REST API tests share; their `api_world` fixture is in tests/conftest.py.

The demo world (tenants.demo.seed): tenants payments and search; pat is a platform admin,
olivia owns payments, dev is a member of payments, sam a member of search; vera, made
here, is a viewer of payments. Default approval rules: dev/review approve automatically,
staging needs a tenant owner, prod a platform admin, viewers are denied.
"""

from __future__ import annotations

from rest_framework.test import APIClient

from tenants import services
from tenants.models import User

ALL_SCOPES = ("read", "request", "approve", "admin")
NAMESPACE = {"app": "shop", "tier": "dev", "cluster": "sandbox", "cpu": "500m", "memory": "512Mi"}


def token_for(user: User, scopes=ALL_SCOPES, **kwargs) -> str:
    return services.create_api_token(user=user, name="test", scopes=list(scopes), **kwargs)[1]


def api(user: User | None = None, scopes=ALL_SCOPES, token: str | None = None) -> APIClient:
    """An API client with a fresh token of `user` (or `token`), anonymous with neither."""
    client = APIClient()
    if user is not None and token is None:
        token = token_for(user, scopes)
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def submit(
    world, *, tier="dev", app="shop", requester=None, tenant=None, kind="namespace", **payload
):
    return services.submit_request(
        tenant=tenant or world.payments,
        kind=kind,
        requester=requester or world.member,
        payload={**NAMESPACE, "app": app, "tier": tier, **payload},
    )


def assert_problem(response, status: int, slug: str | None = None) -> dict:
    """The response is an RFC 9457 problem with this status (and type)."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/problem+json"), response["Content-Type"]
    body = response.json()
    assert {"type", "title", "status", "detail", "instance"} <= set(body), body
    assert body["status"] == status
    if slug is not None:
        assert body["type"] == f"/api/problems/{slug}", body
    return body
