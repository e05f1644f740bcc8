"""Startup refusals: settings Berth cannot run with, each message saying what to set."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping

from django.core.exceptions import ImproperlyConfigured

INSECURE_SECRET_KEYS = {"development-only-insecure-key", "changeme", "change-me", "secret"}
RANDOM_STRING_COMMAND = 'python -c "import secrets; print(secrets.token_urlsafe(50))"'
FERNET_KEY_COMMAND = (
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


def refuse_half_configured_sign_on(given: Mapping[str, str]) -> None:
    """OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are all set, or none is."""
    if any(given.values()) and not all(given.values()):
        raise ImproperlyConfigured(
            "Single sign-on is half configured: set "
            + ", ".join(name for name, value in given.items() if not value)
            + " as well (or unset all of OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET)."
        )


def refuse_malformed_networks(cidrs: Iterable[str]) -> None:
    """Every entry of BERTH_EGRESS_ALLOW is a network."""
    for cidr in cidrs:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError as error:
            raise ImproperlyConfigured(
                f"BERTH_EGRESS_ALLOW: {cidr!r} is not a network ({error}); give comma-separated "
                "CIDRs such as 127.0.0.0/8,10.20.0.0/16."
            ) from None


def production_problems(
    *, debug: bool, secret_key: str, fernet_keys: Iterable[str], dev_oidc: bool
) -> list[str]:
    """The development settings production must not run with, each with what to set instead."""
    problems = []
    if debug:
        problems.append("BERTH_DEBUG is on: unset it (BERTH_ENV=production never runs with DEBUG)")
    if len(secret_key) < 32 or secret_key.lower() in INSECURE_SECRET_KEYS:
        problems.append(
            "SECRET_KEY is a default or shorter than 32 characters: set it to a long random "
            f"string ({RANDOM_STRING_COMMAND})"
        )
    keys = list(fernet_keys)
    if not keys:
        problems.append(f"BERTH_FERNET_KEYS is not set: generate a key with {FERNET_KEY_COMMAND}")
    else:
        from cryptography.fernet import Fernet

        for position, key in enumerate(keys, start=1):
            try:
                Fernet(key)
            except ValueError:
                problems.append(
                    f"BERTH_FERNET_KEYS key #{position} is not a Fernet key (32 url-safe "
                    "base64-encoded bytes): generate one with Fernet.generate_key()"
                )
    if dev_oidc:
        problems.append(
            "BERTH_DEV_OIDC is on: the development identity provider is not for production; "
            "unset it and point OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET at your "
            "organisation's provider (docs/oidc.md)"
        )
    return problems


def refuse_to_start_in_production(problems: list[str]) -> None:
    if problems:
        raise ImproperlyConfigured(
            "Refusing to start in production (DEBUG off or BERTH_ENV=production):\n  - "
            + "\n  - ".join(problems)
        )
