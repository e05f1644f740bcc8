"""The OpenAPI schema generates without a warning, and its docs work air-gapped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.processes
def test_schema_generation_passes_validation_without_warnings(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            os.devnull,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BERTH_DATA_DIR": str(tmp_path),
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stderr


def test_schema_is_served_and_documents_auth_problems_and_idempotency(db):
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    assert schema["openapi"].startswith("3.")
    schemes = schema["components"]["securitySchemes"]
    assert {"apiToken", "oidcAccessToken", "cookieAuth"} <= set(schemes)
    create = schema["paths"]["/api/v1/requests/"]["post"]
    assert {"201", "400", "401", "403", "404", "409", "422", "429"} <= set(create["responses"])
    problem = create["responses"]["400"]["content"]["application/problem+json"]["schema"]
    assert problem == {"$ref": "#/components/schemas/Problem"}
    assert any(p["name"] == "Idempotency-Key" for p in create["parameters"])
    listing = schema["paths"]["/api/v1/requests/"]["get"]
    names = {p["name"] for p in listing["parameters"]}
    assert {
        "page",
        "page_size",
        "ordering",
        "tenant",
        "state",
        "kind",
        "tier",
        "older_than",
    } <= names


def test_swagger_ui_is_served_from_berth_itself(db):
    page = APIClient().get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in page
    assert "cdn." not in page and "unpkg" not in page
    bundle = APIClient().get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert bundle.status_code == 200
