"""Authentication backends: OpenID Connect for people, a password for break-glass only.

`OIDCBackend` is mozilla-django-oidc's backend with three changes: the provider's endpoints
come from discovery when a sign-in happens (not from settings at start-up); the ID token is
checked strictly (RS256 against the provider's JWKS, issuer, audience, expiry, nonce) and
a failure says why; and users are matched by `sub`, with memberships synced from groups.

`BreakGlassBackend` lets only superusers sign in with a password, so a local superuser can
still reach /admin/ when the provider is down, and nobody else can sign in by password.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from portal.auth import discovery, identity
from portal.auth.errors import SignInRefused
from tenants.client_address import client_ip

logger = logging.getLogger(__name__)

SIGNING_ALGORITHM = "RS256"
CLOCK_SKEW_SECONDS = 60
# Claims about the token rather than the person; not copied into the user's claims.
PROTOCOL_CLAIMS = frozenset(
    {"iss", "aud", "exp", "iat", "nbf", "nonce", "at_hash", "c_hash", "auth_time", "azp", "jti"}
)
SESSION_GROUPS_KEY = "berth_signin_groups"

_jwks: dict[str, list[dict[str, Any]]] = {}
_jwks_lock = threading.Lock()


class BreakGlassBackend(ModelBackend):
    """Password sign-in for superusers only; everyone else signs in at the identity provider."""

    def user_can_authenticate(self, user: Any) -> bool:
        return super().user_can_authenticate(user) and bool(getattr(user, "is_superuser", False))


class OIDCBackend(OIDCAuthenticationBackend):
    OIDC_RP_SIGN_ALGO = SIGNING_ALGORITHM
    OIDC_RP_IDP_SIGN_KEY = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The parent reads every endpoint from settings here. Ours are discovered at sign-in,
        # so that Berth starts (and break-glass works) while the provider is unreachable.
        super(OIDCAuthenticationBackend, self).__init__(*args, **kwargs)
        self.UserModel = get_user_model()
        self._provider: discovery.Provider | None = None

    # -- where things are (the parent's attribute names, resolved at sign-in) ----------------
    @property
    def provider(self) -> discovery.Provider:
        if self._provider is None:
            self._provider = discovery.provider()
        return self._provider

    @property
    def OIDC_RP_CLIENT_ID(self) -> str:
        return settings.OIDC_RP_CLIENT_ID

    @property
    def OIDC_RP_CLIENT_SECRET(self) -> str:
        return settings.OIDC_RP_CLIENT_SECRET

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:
        return self.provider.token_endpoint

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:
        return self.provider.userinfo_endpoint

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:
        return self.provider.jwks_uri

    # -- the flow ---------------------------------------------------------------------------
    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        # Only ever the authorization-code callback: a username and password never get here.
        if request is None or not discovery.is_configured():
            return None
        if not (request.GET.get("code") and request.GET.get("state")):
            return None
        return super().authenticate(request, **kwargs)

    def raise_token_response_error(self, response: requests.Response) -> None:
        if response.status_code == 200:
            return
        try:
            error = str(response.json().get("error", ""))[:60]
        except (ValueError, AttributeError):
            error = ""
        raise SignInRefused(
            "provider", f"token endpoint answered HTTP {response.status_code} {error}".strip()
        )

    def retrieve_matching_jwk(self, token: str) -> jwt.PyJWK:
        """The provider's public key for this token, from its JWKS (re-fetched on a new kid)."""
        header = self._header(token)
        kid = header.get("kid")
        for refresh in (False, True):
            keys = [
                key
                for key in self._jwks(refresh=refresh)
                if key.get("kty") == "RSA"
                and key.get("use", "sig") == "sig"
                and key.get("alg", SIGNING_ALGORITHM) == SIGNING_ALGORITHM
                and (kid is None or key.get("kid") == kid)
            ]
            if len(keys) == 1 or (keys and kid is not None):
                return jwt.PyJWK(keys[0])
            if len(keys) > 1:
                raise SignInRefused(
                    "token", "the ID token has no kid and the JWKS has several keys"
                )
        raise SignInRefused("token", f"no RS256 key with kid {kid!r} in the provider's JWKS")

    def _jwks(self, *, refresh: bool) -> list[dict[str, Any]]:
        uri = self.OIDC_OP_JWKS_ENDPOINT
        with _jwks_lock:
            if not refresh and uri in _jwks:
                return _jwks[uri]
        response = requests.get(
            uri,
            timeout=self.get_settings("OIDC_TIMEOUT", None),
            verify=self.get_settings("OIDC_VERIFY_SSL", True),
        )
        if response.status_code != 200:
            raise SignInRefused("provider", f"JWKS endpoint answered HTTP {response.status_code}")
        try:
            keys = [key for key in response.json().get("keys", []) if isinstance(key, dict)]
        except (ValueError, AttributeError, TypeError) as exc:
            raise SignInRefused("provider", "the JWKS endpoint did not return a key set") from exc
        with _jwks_lock:
            _jwks[uri] = keys
        return keys

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        if not token:
            raise SignInRefused("token", "the token response has no ID token")
        payload = self.get_payload_data(token, self.retrieve_matching_jwk(token))
        if "nonce" in kwargs and payload.get("nonce") != kwargs["nonce"]:
            raise SignInRefused("nonce", "the ID token's nonce is not this sign-in's")
        return payload

    def decode_signed(
        self,
        token: str,
        key: Any,
        *,
        audience: str,
        required: list[str],
        kind: str,
        wrong_audience: str,
    ) -> dict[str, Any]:
        """Verify a JWT the provider signed: RS256 against its keys, issuer, audience and
        expiry (with clock skew). Shared by sign-in's ID tokens and the API's access tokens."""
        algorithm = self._header(token).get("alg")
        if algorithm != SIGNING_ALGORITHM:
            raise SignInRefused("token", f"signed with {algorithm!r}, not {SIGNING_ALGORITHM}")
        try:
            return jwt.decode(
                token,
                key,
                algorithms=[SIGNING_ALGORITHM],
                audience=audience,
                issuer=self.provider.issuer,
                leeway=CLOCK_SKEW_SECONDS,
                options={"require": required},
            )
        except jwt.ExpiredSignatureError as exc:
            raise SignInRefused("expired", f"the {kind} has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise SignInRefused("audience", f"the {kind} {wrong_audience}") from exc
        except jwt.InvalidSignatureError as exc:
            raise SignInRefused("token", f"the {kind}'s signature does not verify") from exc
        except jwt.InvalidIssuerError as exc:
            raise SignInRefused("token", f"the {kind} names another issuer") from exc
        except jwt.InvalidTokenError as exc:  # missing claims, malformed, not yet valid
            raise SignInRefused("token", f"{type(exc).__name__}: {exc}") from exc

    def get_payload_data(self, token: str, key: Any) -> dict[str, Any]:
        client_id = self.OIDC_RP_CLIENT_ID
        payload = self.decode_signed(
            token,
            key,
            audience=client_id,
            required=["iss", "aud", "exp", "iat"],
            kind="ID token",
            wrong_audience="is for another client",
        )
        audiences = payload["aud"] if isinstance(payload["aud"], list) else [payload["aud"]]
        if len(audiences) > 1 and payload.get("azp") != client_id:
            raise SignInRefused("audience", "several audiences and the azp is not Berth")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict) -> dict[str, Any]:
        """The ID token's claims, completed by the userinfo endpoint's when there is one."""
        claims = {name: value for name, value in payload.items() if name not in PROTOCOL_CLAIMS}
        if self.provider.userinfo_endpoint:
            try:
                info = super().get_userinfo(access_token, id_token, payload)
            except requests.HTTPError as exc:
                raise SignInRefused(
                    "provider", f"userinfo answered HTTP {exc.response.status_code}"
                ) from exc
            if info.get("sub") != payload.get("sub"):
                raise SignInRefused("subject", "userinfo describes someone else than the ID token")
            claims.update(info)
        return claims

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        user, groups = identity.sign_in(claims=claims, source_ip=client_ip(self.request))
        # What the provider said, so the home page can explain an empty tenant list.
        self.request.session[SESSION_GROUPS_KEY] = groups
        logger.info(
            "signed in user=%s groups=%d ip=%s", user.username, len(groups), client_ip(self.request)
        )
        return user

    def get_user(self, user_id: Any) -> Any:
        return ModelBackend.get_user(self, user_id)  # the parent's skips the is_active check

    @staticmethod
    def _header(token: str) -> dict[str, Any]:
        try:
            return jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as exc:
            raise SignInRefused("token", "the ID token is not a JWT") from exc
