"""Production (DEBUG off) refuses to start without the settings it cannot do without."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FERNET = "q8Qh7Jqg0r4mX2eQnYV1m1cVt9C9bq0z6xk3h8W5e3k="


def start_django(tmp_path: Path, **overrides: str) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "BERTH_FERNET_KEYS", "BERTH_DEBUG"}
    }
    env.update(DJANGO_SETTINGS_MODULE="portal.settings", BERTH_DATA_DIR=str(tmp_path), **overrides)
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


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
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); "
            "from django.conf import settings; print(settings.DEBUG)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "portal.settings",
            "BERTH_DEBUG": value,
            "SECRET_KEY": "x" * 50,
            "BERTH_FERNET_KEYS": FERNET,
            "BERTH_DATA_DIR": str(tmp_path),
        },
    )
    assert result.stdout.strip() == "False", result.stderr
