"""Production (DEBUG off) refuses to start without the settings it cannot do without."""

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.portal_startup import setup_django

# Each test here starts a program (git, kubectl, python): make test-fast leaves them out.
pytestmark = pytest.mark.processes

FERNET = "q8Qh7Jqg0r4mX2eQnYV1m1cVt9C9bq0z6xk3h8W5e3k="
# Settings each test gives explicitly, never inherited from the shell that runs the suite.
CLEARED = {"SECRET_KEY", "BERTH_FERNET_KEYS", "BERTH_DEBUG", "BERTH_ENV", "BERTH_DEV_OIDC"}


def start_django(tmp_path: Path, **overrides: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env.update(DJANGO_SETTINGS_MODULE="portal.settings", BERTH_DATA_DIR=str(tmp_path), **overrides)
    return setup_django(env, then="; print('started')")


def test_refuses_to_start_without_secret_key(tmp_path):
    result = start_django(tmp_path, BERTH_FERNET_KEYS=FERNET)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_refuses_to_start_without_fernet_keys(tmp_path):
    result = start_django(tmp_path, SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "BERTH_FERNET_KEYS is not set" in result.stderr


def test_starts_with_debug_off_when_configured(tmp_path):
    result = start_django(tmp_path, SECRET_KEY="x" * 50, BERTH_FERNET_KEYS=FERNET)
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_debug_is_off_unless_turned_on(tmp_path, value):
    result = setup_django(
        {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "portal.settings",
            "BERTH_DEBUG": value,
            "SECRET_KEY": "x" * 50,
            "BERTH_FERNET_KEYS": FERNET,
            "BERTH_DATA_DIR": str(tmp_path),
        },
        then="; from django.conf import settings; print(settings.DEBUG)",
    )
    assert result.stdout.strip() == "False", result.stderr


# --- production guard: development settings are refused, each with what to set instead ---


def test_refuses_a_short_secret_key(tmp_path):
    result = start_django(tmp_path, SECRET_KEY="too-short", BERTH_FERNET_KEYS=FERNET)
    assert result.returncode != 0
    assert "SECRET_KEY is a default or shorter than 32 characters" in result.stderr
    assert "secrets.token_urlsafe(50)" in result.stderr


def test_refuses_the_development_secret_key_even_with_debug_on_in_production(tmp_path):
    result = start_django(
        tmp_path, BERTH_ENV="production", BERTH_DEBUG="1", BERTH_FERNET_KEYS=FERNET
    )
    assert result.returncode != 0
    assert "BERTH_DEBUG is on" in result.stderr
    assert "SECRET_KEY is a default" in result.stderr


def test_refuses_debug_when_the_environment_says_production(tmp_path):
    result = start_django(
        tmp_path,
        BERTH_ENV="production",
        BERTH_DEBUG="1",
        SECRET_KEY="x" * 50,
        BERTH_FERNET_KEYS=FERNET,
    )
    assert result.returncode != 0
    assert "Refusing to start in production" in result.stderr
    assert "BERTH_DEBUG is on: unset it" in result.stderr


def test_refuses_no_fernet_key_when_the_environment_says_production(tmp_path):
    result = start_django(tmp_path, BERTH_ENV="production", BERTH_DEBUG="1", SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "BERTH_FERNET_KEYS is not set" in result.stderr


def test_refuses_a_fernet_key_that_is_not_one(tmp_path):
    result = start_django(tmp_path, SECRET_KEY="x" * 50, BERTH_FERNET_KEYS=f"{FERNET},not-a-key")
    assert result.returncode != 0
    assert "BERTH_FERNET_KEYS key #2 is not a Fernet key" in result.stderr


def test_refuses_the_development_identity_provider(tmp_path):
    result = start_django(
        tmp_path, SECRET_KEY="x" * 50, BERTH_FERNET_KEYS=FERNET, BERTH_DEV_OIDC="1"
    )
    assert result.returncode != 0
    assert "BERTH_DEV_OIDC is on" in result.stderr
    assert "OIDC_ISSUER" in result.stderr


def test_development_runs_with_debug_and_the_development_provider(tmp_path):
    result = start_django(tmp_path, BERTH_DEBUG="1", BERTH_DEV_OIDC="1")
    assert result.returncode == 0, result.stderr


def test_names_every_problem_at_once(tmp_path):
    result = start_django(tmp_path, BERTH_ENV="production", BERTH_DEBUG="1", BERTH_DEV_OIDC="1")
    assert result.returncode != 0
    for problem in (
        "BERTH_DEBUG is on",
        "SECRET_KEY is a default",
        "BERTH_FERNET_KEYS is not set",
        "BERTH_DEV_OIDC is on",
    ):
        assert problem in result.stderr
