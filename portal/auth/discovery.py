"""Where the identity provider's endpoints are.

They come from the discovery document of `OIDC_ISSUER` (`/.well-known/openid-configuration`),
fetched once per process and cached; an endpoint set explicitly in the settings
(`OIDC_OP_*_ENDPOINT`) overrides the discovered one. Nothing is fetched at start-up, so Berth
starts, and the break-glass admin can sign in, while the provider is down.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import requests
from django.conf import settings

from portal.auth.errors import SignInRefused

logger = logging.getLogger(__name__)

# Provider field -> the setting that overrides it.
EXPLICIT_SETTINGS = {
    "authorization_endpoint": "OIDC_OP_AUTHORIZATION_ENDPOINT",
    "token_endpoint": "OIDC_OP_TOKEN_ENDPOINT",
    "userinfo_endpoint": "OIDC_OP_USER_ENDPOINT",
    "jwks_uri": "OIDC_OP_JWKS_ENDPOINT",
    "end_session_endpoint": "OIDC_OP_LOGOUT_ENDPOINT",
}
REQUIRED = ("authorization_endpoint", "token_endpoint", "jwks_uri")

_documents: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str = ""  # optional: without it the ID token's claims are used alone
    end_session_endpoint: str = ""  # optional: without it sign-out is local only


def is_configured() -> bool:
    return bool(getattr(settings, "OIDC_ISSUER", "") and getattr(settings, "OIDC_RP_CLIENT_ID", ""))


def provider() -> Provider:
    """The provider's endpoints: explicit settings first, then its discovery document."""
    if not is_configured():
        raise SignInRefused("not_configured", "OIDC_ISSUER and OIDC_CLIENT_ID are not set")
    issuer: str = settings.OIDC_ISSUER
    explicit = {
        field: getattr(settings, name, "") or "" for field, name in EXPLICIT_SETTINGS.items()
    }
    document: dict[str, Any] = {}
    if not all(explicit.values()):
        try:
            document = discovery_document(issuer)
        except SignInRefused:
            if not all(explicit[field] for field in REQUIRED):
                raise
            # The required endpoints are set explicitly: sign in without the optional ones.
    values = {
        field: explicit[field] or str(document.get(field) or "") for field in EXPLICIT_SETTINGS
    }
    missing = [field for field in REQUIRED if not values[field]]
    if missing:
        raise SignInRefused("provider", f"the provider does not publish {', '.join(missing)}")
    return Provider(issuer=str(document.get("issuer") or issuer), **values)


def discovery_document(issuer: str) -> dict[str, Any]:
    url = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
    with _lock:
        if url in _documents:
            return _documents[url]
    try:
        response = requests.get(
            url,
            timeout=getattr(settings, "OIDC_TIMEOUT", 10),
            verify=getattr(settings, "OIDC_VERIFY_SSL", True),
        )
        response.raise_for_status()
        document = response.json()
    except requests.HTTPError as exc:
        raise SignInRefused(
            "unreachable", f"discovery at {url} answered HTTP {exc.response.status_code}"
        ) from exc
    except (requests.RequestException, ValueError) as exc:
        raise SignInRefused("unreachable", f"discovery at {url}: {type(exc).__name__}") from exc
    if not isinstance(document, dict):
        raise SignInRefused("provider", f"discovery at {url} did not return a JSON object")
    # OpenID Connect Discovery 1.0, section 4.3: the document must name the same issuer.
    if str(document.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
        raise SignInRefused(
            "provider",
            f"discovery at {url} names issuer {document.get('issuer')!r}, not OIDC_ISSUER",
        )
    with _lock:
        _documents[url] = document
    logger.info("fetched the identity provider's discovery document from %s", url)
    return document


def clear_cache() -> None:
    with _lock:
        _documents.clear()
