"""Every API call the `berth` command makes, in one table: method, path, the query
parameters and body fields it may send. tests/berth_cli/test_cli_api_schema.py checks each
against Berth's OpenAPI schema (/api/schema/), so the command cannot drift from the API."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # with {placeholders} named as the schema names them
    query: tuple[str, ...] = ()
    body: tuple[str, ...] = ()


LIST = ("page", "page_size")

CALLS: dict[str, Call] = {
    "me": Call("GET", "/api/v1/me/"),
    "tenants": Call("GET", "/api/v1/tenants/", query=LIST),
    "requests": Call("GET", "/api/v1/requests/", query=(*LIST, "tenant", "kind", "state")),
    "request": Call("GET", "/api/v1/requests/{id}/"),
    "submit": Call("POST", "/api/v1/requests/", body=("tenant", "kind", "payload")),
    "approve": Call("POST", "/api/v1/requests/{id}/approve/", body=("plan_digest", "note")),
    "reject": Call("POST", "/api/v1/requests/{id}/reject/", body=("reason",)),
    "namespaces": Call("GET", "/api/v1/namespaces/", query=(*LIST, "tenant", "state")),
    "namespace": Call("GET", "/api/v1/namespaces/{id}/"),
    "wake": Call("POST", "/api/v1/namespaces/{namespace}/wake/", body=("hours", "cluster")),
    "kubeconfig": Call(
        "GET", "/api/v1/namespaces/{namespace}/kubeconfig/", query=("credentials", "cluster")
    ),
    "mint_deploy_token": Call(
        "POST",
        "/api/v1/namespaces/{namespace}/deploy-tokens/",
        body=("ttl_minutes", "purpose", "cluster"),
    ),
    "environments": Call(
        "GET", "/api/v1/environments/", query=(*LIST, "tenant", "project", "env_slug", "state")
    ),
    "environment": Call("GET", "/api/v1/environments/{id}/"),
    "create_environment": Call(
        "POST",
        "/api/v1/environments/",
        query=("reuse",),
        body=("tenant", "project", "env_slug", "branch", "mr_id", "tier", "cluster", "ttl"),
    ),
    "stop_environment": Call(
        "POST", "/api/v1/environments/stop/", body=("tenant", "project", "env_slug", "reason")
    ),
    "access_grants": Call(
        "GET", "/api/v1/access-grants/", query=(*LIST, "state", "namespace", "mine")
    ),
    "access_grant": Call("GET", "/api/v1/access-grants/{id}/"),
    "request_access": Call(
        "POST",
        "/api/v1/access-grants/",
        body=("namespace", "role", "duration", "reason", "cluster"),
    ),
    "revoke_access": Call("POST", "/api/v1/access-grants/{id}/revoke/"),
}
