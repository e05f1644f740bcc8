"""A development OpenID Connect provider, so `make run` signs people in for real.

A separate small Django project (django-oidc-provider) with its own settings, its own SQLite
database in the data dir and its own users: the demo people of tenants.demo, with their
groups. `make run` starts it as its own process on port 8001 and points Berth at it.
Never for production: it refuses to start unless BERTH_DEBUG=1 and BERTH_DEV_OIDC=1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

REFUSAL = (
    "Refusing to start the development identity provider: it is for development only and "
    "needs both BERTH_DEBUG=1 and BERTH_DEV_OIDC=1 (`make run` sets them). In production, "
    "point OIDC_ISSUER at your organisation's identity provider instead (docs/oidc.md)."
)


def development_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("BERTH_DEBUG") == "1" and environ.get("BERTH_DEV_OIDC") == "1"


def demo_password(username: str) -> str:
    """Demo accounts' password at the development provider: the username twice."""
    return username * 2
