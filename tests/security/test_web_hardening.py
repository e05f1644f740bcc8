"""The web's last hardening: the headers an external scan (Mozilla's HTTP Observatory checks)
looks for, nothing signed-in kept in caches, sign-in and sign-out that a cross-site link
cannot trigger, and an API that degrades instead of breaking when Redis is gone."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.test import override_settings
from rest_framework.test import APIClient

from tenants import demo, services
from tenants.models import Request, User
from tenants.selectors import review
from tests.support.browser import needs_chromium, signed_in_page

HTTPS = {"HTTP_X_FORWARDED_PROTO": "https"}


# --- headers ---------------------------------------------------------------------------------


def policy(response) -> dict[str, list[str]]:
    directives = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def test_every_page_has_a_strict_content_security_policy(client, demo_world):
    client.force_login(demo_world["developer"])
    for path in ("/", "/tenants/payments/", "/login/", "/api/docs/"):
        directives = policy(client.get(path))
        assert directives["script-src"] == ["'self'"], path
        # Swagger UI (the API docs, and only they) sets inline styles.
        styles = ["'self'", "'unsafe-inline'"] if path == "/api/docs/" else ["'self'"]
        assert directives["style-src"] == styles, path
        assert directives["default-src"] == ["'self'"]
        assert directives["object-src"] == ["'none'"] and directives["base-uri"] == ["'none'"]
        assert directives["frame-ancestors"] == ["'none'"]
        assert "'unsafe-inline'" not in " ".join(directives["script-src"])


def test_forms_may_post_to_the_identity_provider_sign_out_redirects_to(
    client, demo_world, settings
):
    settings.OIDC_ISSUER = "https://sso.example.com/realms/platform"
    client.force_login(demo_world["developer"])
    assert policy(client.get("/"))["form-action"] == ["'self'", "https://sso.example.com"]


def test_behind_tls_the_answers_carry_what_the_observatory_checks(client, demo_world, settings):
    """HSTS (a year), nosniff, no framing, a referrer policy, no cross-origin embedding, no
    CORS, cookies Secure, HttpOnly and SameSite: with TLS terminated in front."""
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    client.force_login(demo_world["developer"])
    response = client.get("/tenants/payments/", **HTTPS)
    assert response["Strict-Transport-Security"] == "max-age=31536000"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert response["Cross-Origin-Resource-Policy"] == "same-origin"
    assert "Access-Control-Allow-Origin" not in response
    form = client.get("/tenants/payments/request/namespace/", **HTTPS)
    assert form.cookies["csrftoken"]["secure"] and form.cookies["csrftoken"]["samesite"] == "Lax"
    # A real session cookie, as the break-glass sign-in sets it.
    root = User.objects.create_superuser("root", password="break-glass-password")
    browser = type(client)()
    browser.get("/admin/login/", **HTTPS)
    signed_in = browser.post(
        "/admin/login/",
        {
            "username": root.username,
            "password": "break-glass-password",
            "next": "/admin/",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
        },
        **HTTPS,
    )
    session = signed_in.cookies["sessionid"]
    assert session["secure"] and session["httponly"] and session["samesite"] == "Lax"


def test_hsts_is_only_sent_over_https(client, demo_world, settings):
    settings.SECURE_HSTS_SECONDS = 31536000
    assert "Strict-Transport-Security" not in client.get("/login/")


def test_with_nothing_in_front_berth_redirects_plain_http_but_not_its_probes(
    client, demo_world, settings
):
    settings.SECURE_SSL_REDIRECT = True  # BERTH_SSL_REDIRECT=1
    redirected = client.get("/login/?next=/")
    assert redirected.status_code == 301
    assert redirected["Location"] == "https://testserver/login/?next=/"
    assert client.get("/healthz").status_code == 200  # kubelet probes speak HTTP
    assert client.get("/login/", **HTTPS).status_code == 200


def test_production_settings_turn_hsts_on_for_a_year(monkeypatch):
    import importlib

    import portal.settings as production

    monkeypatch.setenv("SECRET_KEY", "x" * 50)
    monkeypatch.delenv("BERTH_DEBUG", raising=False)
    monkeypatch.delenv("BERTH_HSTS_SECONDS", raising=False)
    try:
        assert importlib.reload(production).SECURE_HSTS_SECONDS == 31536000
    finally:
        importlib.reload(production)


def test_nothing_a_signed_in_person_saw_is_stored_by_a_cache(client, demo_world):
    client.force_login(demo_world["developer"])
    for path in ("/", "/tenants/payments/", "/api/v1/me/"):
        cache_control = client.get(path)["Cache-Control"]
        assert "no-store" in cache_control and "private" in cache_control, path


def test_api_answers_to_a_token_are_not_stored_either(demo_world):
    _, value = services.create_api_token(user=demo_world["developer"], name="t", scopes=["read"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {value}")
    assert "no-store" in api.get("/api/v1/requests/")["Cache-Control"]


# --- sign-in and sign-out that no other site can trigger ------------------------------------


def test_starting_a_sign_in_while_signed_in_changes_nothing(client, demo_world):
    client.force_login(demo_world["developer"])
    response = client.get("/oidc/authenticate/")
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200  # still signed in


def test_a_stray_callback_does_not_end_a_session(client, demo_world):
    client.force_login(demo_world["developer"])
    response = client.get("/oidc/callback/", {"state": "forged", "code": "x"})
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200


def test_signing_out_takes_a_post(client, demo_world):
    client.force_login(demo_world["developer"])
    assert client.get("/oidc/logout/").status_code == 405
    assert client.get("/").status_code == 200
    assert client.post("/oidc/logout/").status_code == 302
    assert client.get("/")["Location"].startswith("/login/")


# --- the API degrades, it does not break ----------------------------------------------------


def test_an_unknown_api_path_is_a_404_problem_for_every_method(client, demo_world):
    client.force_login(demo_world["developer"])  # a session cookie, and no CSRF token
    response = client.post("/api/v1/nothing-here/", {}, content_type="application/json")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_a_refused_csrf_check_under_the_api_is_a_problem(demo_world):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(demo_world["developer"])
    response = browser.post("/api/v1/requests/", {}, content_type="application/json")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert "CSRF" in response.json()["detail"]


UNREACHABLE_REDIS = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 0.2},
    }
}


def test_the_api_lets_requests_through_when_the_rate_limiters_cache_is_down(demo_world, caplog):
    from portal import metrics

    _, value = services.create_api_token(user=demo_world["developer"], name="t", scopes=["read"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {value}")
    failures = metrics.instruments().throttle_cache_failures
    before = failures._value.get()
    with override_settings(CACHES=UNREACHABLE_REDIS):
        caches["default"]  # a fresh, unreachable cache
        response = api.get("/api/v1/me/")
    assert response.status_code == 200
    assert failures._value.get() == before + 1
    assert "rate limiting is off: its cache is unreachable" in caplog.text


def test_an_approval_saved_while_the_broker_is_down_is_not_a_500(client, demo_world, monkeypatch):
    """The decision is in the database (the truth); the worker's message could not be
    queued, so the sweep will find the request: the person sees their approval, not a 500."""
    from kombu.exceptions import OperationalError

    from provisioning import tasks

    def down(*_: object) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    created = services.submit_request(
        tenant=demo_world["developer"].memberships.get().tenant,
        kind="namespace",
        requester=demo_world["developer"],
        payload={"app": "shop", "tier": "prod", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )
    monkeypatch.setattr(tasks.converge, "delay", down)
    client.force_login(demo_world["admin"])
    with pytest.MonkeyPatch.context():
        response = client.post(
            f"/requests/{created.pk}/approve/",
            {"plan_digest": review(created).digest, "note": ""},
            follow=True,
        )
    assert response.status_code == 200
    assert Request.objects.get(pk=created.pk).state == "approved"


# --- in a browser: the policy blocks nothing Berth itself serves ------------------------------


@needs_chromium
@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_no_page_breaks_its_own_content_security_policy(browser, live_server):
    """Chromium reports every resource or script the policy blocks; Berth's pages, the API
    docs (Swagger UI, served by Berth) and the admin must make none of those reports."""
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    root = User.objects.create_superuser(
        "root", password="break-glass-password", is_platform_admin=True
    )
    page = signed_in_page(browser, live_server, root)
    reports: list[str] = []
    page.on(
        "console",
        lambda message: (
            reports.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    for path in (
        "/",
        "/tenants/payments/",
        "/tenants/payments/request/namespace/",
        "/tenants/payments/request/ephemeral/",
        "/approvals/",
        "/names/",
        "/admin/",
        "/admin/tenants/cluster/1/change/",
        "/api/docs/",
    ):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()  # Swagger UI started: its script ran
    assert "Berth API" in page.locator(".swagger-ui .info .title").inner_text()
    assert reports == []
