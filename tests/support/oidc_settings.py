"""Berth's side of the sign-in tests: its settings pointed at a provider the tests started."""

from __future__ import annotations

from portal.auth import discovery
from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET


def sign_in_at(settings, issuer: str, **more: object) -> None:
    """Point Berth's sign-in at the provider at `issuer`, as the client registered there
    (CLIENT_ID with its secret), with `more` settings by name; discovery is asked afresh."""
    settings.OIDC_ISSUER = issuer
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    for name, value in more.items():
        setattr(settings, name, value)
    discovery.clear_cache()
