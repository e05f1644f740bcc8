"""A corpus of hostile names and quantities (what people paste, what attackers try) sent to
the live API in every name-like and quantity-like field: each is answered with a 2xx or a
4xx problem+json, never a server error, and nothing accepted lands outside the tenant's
namespace prefix. The generated requests of test_schemathesis.py complement it."""

from __future__ import annotations

from urllib.parse import quote

import pytest
import requests

from tenants import demo, services
from tenants.models import Namespace, Project, Tenant, User

pytestmark = pytest.mark.django_db(transaction=True)


# Hostile names and quantities: what people paste, what attackers try.
NAME_CORPUS = [
    "",
    " ",
    "a" * 64,
    "a" * 300,
    "-lead",
    "trail-",
    "UPPER",
    "dot.ted",
    "under_score",
    "kube-system",
    "default",
    "kargo",
    "apps",
    "argocd",
    "flux-system",
    "berth-system",
    "payments-apps",
    "payments-shop-kargo",
    "../../etc",
    "a/b",
    "a%2Fb",
    "a\\b",
    "a b",
    "shоp",  # Cyrillic о, a confusable
    "ｓｈｏｐ",
    "shop\u200b",
    "shop\x00",
    "𝓼𝓱𝓸𝓹",
    "ä",
    "١٢٣",
    "null",
    "None",
    "0",
    "-1",
    "${TENANT}",
    "$(reboot)",
    "<script>",
    "' OR 1=1 --",
    "%00",
    "\ud800",
]
QUANTITY_CORPUS = [
    "",
    "0",
    "0m",
    "-0",
    "-1",
    "1n",
    "0.0001",
    "1_000m",
    "١٠٠m",
    "1e3m",
    "1e309",
    "NaN",
    "Infinity",
    "1.2.3",
    "1Ki",
    "0.5Mi",
    "100M",
    "9" * 40,
    "1 Gi",
    "1gi",
    "0x10",
    True,
    None,
    [],
    {},
    1e308,
]


@pytest.mark.fuzz
def test_a_corpus_of_hostile_names_and_quantities_is_refused_cleanly(live_server, settings):
    """Every one of these in every name-like or quantity-like field: a 2xx or a 4xx
    problem+json, never a server error, never a namespace outside the tenant's prefix."""
    settings.BERTH_API_RATE = "1000000/min"
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    Project.objects.create(tenant=Tenant.objects.get(slug="payments"), name="billing")
    member = User.objects.get(username="olivia")  # an owner: may also write rules
    token = services.create_api_token(user=member, name="corpus", scopes=["read", "request"])[1]
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    base = live_server.url
    namespace = {"app": "shop", "tier": "dev", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"}
    environment = {"tenant": "payments", "project": "billing", "env_slug": "review-1"}

    def namespace_request(field: str, value: str) -> tuple[str, str, dict]:
        body = {"tenant": "payments", "kind": "namespace", "payload": {**namespace, field: value}}
        return ("post", "/api/v1/requests/", body)

    def environment_preview(field: str, value: str) -> tuple[str, str, dict]:
        return ("post", "/api/v1/environments/?dry_run=true", {**environment, field: value})

    calls = []
    for value in NAME_CORPUS:
        calls += [namespace_request(field, value) for field in ("app", "tier", "cluster")]
        calls += [environment_preview(field, value) for field in ("project", "env_slug", "branch")]
        calls.append(
            (
                "put",
                "/api/v1/tenants/payments/environment-rules/",
                {"rules": [{"if": "", "namespace": value}]},
            )
        )
        segment = quote(value, safe="", errors="surrogatepass")
        calls.append(("get", f"/api/v1/tenants/{segment}/", None))
    for value in QUANTITY_CORPUS:
        calls += [namespace_request(field, value) for field in ("cpu", "memory", "storage")]
        calls.append(environment_preview("ttl", value))
    failures = []
    for method, path, body in calls:
        response = session.request(method, base + path, json=body, timeout=10)
        status = response.status_code
        if status >= 500 or (
            status >= 400 and response.headers["Content-Type"] != "application/problem+json"
        ):
            failures.append(f"{method.upper()} {path} {body!r}: {status} {response.text[:200]}")
    assert not failures, "\n".join(failures)
    # Whatever was accepted stayed inside the tenant's prefix.
    assert (
        not Namespace.objects.exclude(name__startswith="payments-")
        .filter(tenant__slug="payments")
        .exists()
    )


def test_a_platform_admins_references_by_name_are_refused_cleanly(live_server, settings):
    """The names a platform admin's writes refer to (a campaign's tier): a NUL or an
    overlong name is a 400 naming the field, never the database's error (PostgreSQL refuses
    NUL in text outright)."""
    settings.BERTH_API_RATE = "1000000/min"
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    admin = User.objects.get(username="pat")
    token = services.create_api_token(user=admin, name="corpus", scopes=["read", "admin"])[1]
    for value in ("dev\x00", "\x00", "a" * 300, "no-such-tier"):
        response = requests.post(
            f"{live_server.url}/api/v1/campaigns/",
            json={"tier": value, "reason": "hostile"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert response.status_code == 400, (value, response.status_code, response.text[:200])
        assert "tier" in response.json()["errors"], response.text[:200]
