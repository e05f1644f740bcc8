"""Logging: one JSON object per line or plain text, each with the request id; secrets are
redacted on the handler, whatever logged them (portal.logging; docs/operations.md).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured

LOG_FORMATS = {"json", "plain"}


def logging_config(*, log_format: str, level: str) -> dict[str, Any]:
    """Django's LOGGING for BERTH_LOG_FORMAT and BERTH_LOG_LEVEL."""
    if log_format not in LOG_FORMATS:
        raise ImproperlyConfigured(f"BERTH_LOG_FORMAT must be json or plain, not {log_format!r}.")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "context": {"()": "portal.logging.ContextFilter"},
            "redact": {"()": "portal.logging.RedactSecretsFilter"},
        },
        "formatters": {
            "json": {"()": "portal.logging.JsonFormatter"},
            "plain": {"()": "portal.logging.PlainFormatter"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["context", "redact"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        # runserver's own request lines: berth.access already has them, with the request id.
        "loggers": {
            "django.server": {"handlers": ["console"], "level": "WARNING", "propagate": False}
        },
    }


def quiet_loggers(names: str) -> dict[str, dict[str, Any]]:
    """Loggers (comma-separated names) that say only warnings and errors: `make run` quiets
    the line per request and per task, which buried what a newcomer should read."""
    return {name.strip(): {"level": "WARNING"} for name in names.split(",") if name.strip()}
