"""Structured logs: a request id on every line and in the response, and never a secret."""

import io
import json
import logging
import re

import pytest
from celery import shared_task
from django.conf import settings
from django.urls import reverse

from portal.logging import (
    HEADER,
    ContextFilter,
    JsonFormatter,
    PlainFormatter,
    RedactSecretsFilter,
    _send_request_id,
    bound,
)

CLUSTER_TOKEN = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImJlcnRoIn0."
    "eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwic3ViIjoiYmVydGgifQ."
    "c2lnbmF0dXJlLW9mLXRoZS1jbHVzdGVyLXRva2Vu"
)
DB_PASSWORD = "hunter2-database-password"
DB_URL = f"postgres://berth:{DB_PASSWORD}@postgres.internal:5432/berth"


@pytest.fixture
def captured():
    """The console handler's filters and formatter, writing JSON into a buffer."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextFilter())
    handler.addFilter(RedactSecretsFilter())
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_the_settings_log_json_with_the_filters_when_debug_is_off():
    handler = settings.LOGGING["handlers"]["console"]
    assert settings.LOG_FORMAT == "json" and handler["formatter"] == "json"
    assert handler["filters"] == ["context", "redact"]


def test_a_response_carries_a_generated_request_id(client):
    response = client.get("/healthz")

    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])


def test_a_valid_incoming_request_id_is_kept(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="lb-7f3a.2_x")

    assert response["X-Request-ID"] == "lb-7f3a.2_x"


@pytest.mark.parametrize("given", ["has space", "semi;colon", "x" * 129, "ünïcode", ""])
def test_an_invalid_incoming_request_id_is_replaced(client, given):
    response = client.get("/healthz", HTTP_X_REQUEST_ID=given)

    assert response["X-Request-ID"] != given
    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])


@pytest.mark.django_db
def test_the_access_line_is_json_with_the_request_id(client, captured):
    client.get(reverse("login"), HTTP_X_REQUEST_ID="abc")

    line = next(entry for entry in captured() if entry["logger"] == "berth.access")
    assert line["request_id"] == "abc"
    assert line["message"] == "GET /login/ 200"
    assert line["level"] == "INFO"
    assert line["status"] == 200 and line["view"] == "login" and "duration_ms" in line
    assert "time" in line


@pytest.mark.django_db
def test_djangos_own_error_lines_carry_the_request_id_too(client, captured):
    client.get("/no-such-page/", HTTP_X_REQUEST_ID="nf-1")

    line = next(entry for entry in captured() if entry["logger"] == "django.request")
    assert line["message"] == "Not Found: /no-such-page/" and line["request_id"] == "nf-1"


def test_the_request_id_is_forgotten_when_the_response_is_done(client, captured):
    client.get("/healthz", HTTP_X_REQUEST_ID="done-1")
    logging.getLogger("berth.test").info("between requests")

    assert captured()[-1]["request_id"] == "-"


def test_lines_outside_a_request_say_so(captured):
    logging.getLogger("berth.test").info("no request here")

    assert captured()[-1]["request_id"] == "-"


def test_an_exception_with_a_cluster_token_and_a_database_password_is_redacted(captured):
    log = logging.getLogger("provisioning.test")
    try:
        raise ConnectionError(
            f"could not reach {DB_URL}; API said 401 to Authorization: Bearer {CLUSTER_TOKEN}"
        )
    except ConnectionError:
        log.exception("cluster call failed with token=%s", CLUSTER_TOKEN)

    output = json.dumps(captured())
    assert CLUSTER_TOKEN not in output
    assert DB_PASSWORD not in output
    assert "postgres://berth:[REDACTED]@postgres.internal:5432/berth" in output
    assert "Bearer [REDACTED]" in output
    assert "ConnectionError" in output  # the traceback is still there, only without secrets


def test_the_values_of_secret_settings_are_redacted_wherever_they_appear(captured, settings):
    settings.OIDC_RP_CLIENT_SECRET = "oidc-client-secret-value-42"
    logging.getLogger("berth.test").warning(
        "keys: %s %s %s",
        settings.SECRET_KEY,
        settings.FERNET_KEYS[0],
        "oidc-client-secret-value-42",
    )

    output = captured()[-1]["message"]
    assert settings.SECRET_KEY not in output
    assert settings.FERNET_KEYS[0] not in output
    assert "oidc-client-secret-value-42" not in output
    assert output == "keys: [REDACTED] [REDACTED] [REDACTED]"


def test_secret_looking_pairs_in_extra_fields_are_redacted(captured):
    logging.getLogger("berth.test").info(
        "kubeconfig loaded", extra={"detail": "client-key-data: LS0tLS1CRUdJTi and password=pw1"}
    )

    assert captured()[-1]["detail"] == "client-key-data: [REDACTED] and password=[REDACTED]"


def test_the_plain_format_redacts_and_shows_the_request_id():
    record = logging.makeLogRecord(
        {
            "name": "berth.test",
            "levelno": logging.INFO,
            "levelname": "INFO",
            "msg": "dsn %s",
            "args": (DB_URL,),
        }
    )
    with bound(request_id="req-1"):
        ContextFilter().filter(record)
    RedactSecretsFilter().filter(record)

    line = PlainFormatter().format(record)

    assert "[req-1]" in line and DB_PASSWORD not in line


@shared_task(name="tests.log_while_working")
def log_while_working(request_id: int) -> None:
    logging.getLogger("provisioning.test").info("working on it")


def test_task_lines_carry_the_tenancy_request_and_the_sending_request_id(captured):
    log_while_working.apply(args=[42], headers={HEADER: "approve-req-9"})

    line = next(entry for entry in captured() if entry["message"] == "working on it")
    assert line["tenancy_request"] == 42
    assert line["request_id"] == "approve-req-9"
    assert line["task"] == "tests.log_while_working"


def test_task_context_does_not_leak_after_the_task(captured):
    log_while_working.apply(kwargs={"request_id": 7})
    logging.getLogger("berth.test").info("after")

    line = captured()[-1]
    assert line["message"] == "after" and "tenancy_request" not in line and "task" not in line


def test_a_message_sent_during_a_request_carries_its_id():
    headers: dict = {}
    with bound(request_id="web-req-1"):
        _send_request_id(headers=headers)

    assert headers == {HEADER: "web-req-1"}
