"""Authentication: bearer tokens to users, as kube-apiserver's token authenticators do.

* the admin token (``KubeSandbox(token=...)``, or one generated at start and written to the
  kubeconfig): user ``kubesandbox-admin`` in ``system:masters``;
* static tokens, the format of kube-apiserver's ``--token-auth-file``:
  ``token,user,uid,"group1,group2"`` per line;
* ServiceAccount tokens minted by the TokenRequest API
  (``POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token``): user
  ``system:serviceaccount:<ns>:<name>`` in ``system:serviceaccounts`` and
  ``system:serviceaccounts:<ns>``; they stop working when they expire or the ServiceAccount
  is deleted (or re-created with another uid);
* OpenID Connect ID tokens, as kube-apiserver's ``--oidc-*`` flags configure them
  (``OidcOptions``): RS256-signed by a key of the issuer's JWKS (found through its discovery
  document and fetched over HTTP with PyJWT's ``PyJWKClient``), ``iss`` the issuer,
  ``aud`` holding the client id, not expired; the user and groups come from the claims named,
  with their prefixes.

Every authenticated user is also in ``system:authenticated``. A request without credentials
is ``system:anonymous`` in ``system:unauthenticated``, unless the sandbox was told to treat
it as another user (``anonymous_user``); a request with a token nobody knows is 401.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jwt

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
MASTERS = "system:masters"
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def as_dict(self) -> dict:
        info: dict = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = {key: list(values) for key, values in self.extra}
        return info

    @property
    def is_admin(self) -> bool:
        return MASTERS in self.groups


ADMIN = UserInfo("kubesandbox-admin", groups=(MASTERS, AUTHENTICATED))
ANONYMOUS = UserInfo("system:anonymous", groups=(UNAUTHENTICATED,))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    return UserInfo(
        f"{SA_PREFIX}{namespace}:{name}",
        uid,
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
    )


def with_authenticated(user: UserInfo) -> UserInfo:
    """Authenticated users are in system:authenticated, whatever else they are in."""
    if user.username == ANONYMOUS.username or AUTHENTICATED in user.groups:
        return user
    return UserInfo(user.username, user.uid, (*user.groups, AUTHENTICATED), user.extra)


def parse_token_file(text: str) -> dict[str, UserInfo]:
    """``token,user,uid[,"group1,group2"]`` lines, as kube-apiserver's --token-auth-file."""
    tokens = {}
    for row in csv.reader(io.StringIO(text)):
        if not row or row[0].startswith("#"):
            continue
        if len(row) < 3:
            raise ValueError(f"token file line needs at least token,user,uid: {row!r}")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        tokens[row[0].strip()] = with_authenticated(
            UserInfo(row[1].strip(), row[2].strip(), groups)
        )
    return tokens


@dataclass
class _Minted:
    namespace: str
    name: str
    uid: str
    expires: float
    audiences: tuple[str, ...]


# kube-apiserver's --oidc-signing-algs default; a token signed otherwise is refused.
OIDC_ALGORITHMS = ("RS256",)
DISCOVERY_TIMEOUT = 10.0


@dataclass(frozen=True)
class OidcOptions:
    """kube-apiserver's ``--oidc-issuer-url``, ``--oidc-client-id``,
    ``--oidc-username-claim``, ``--oidc-username-prefix``, ``--oidc-groups-claim`` and
    ``--oidc-groups-prefix``. ``username_prefix`` None is kube-apiserver's default: none
    for the ``email`` claim, ``<issuer>#`` for any other; ``"-"`` means none."""

    issuer_url: str
    client_id: str
    username_claim: str = "sub"
    username_prefix: str | None = None
    groups_claim: str = ""
    groups_prefix: str = ""

    def prefix(self) -> str:
        if self.username_prefix is None:
            return "" if self.username_claim == "email" else f"{self.issuer_url}#"
        return "" if self.username_prefix == "-" else self.username_prefix


class OidcAuthenticator:
    """ID tokens from one issuer to users. The issuer's keys are looked up at the first
    token (its discovery document names the JWKS), so the stand-in starts while the
    provider is still starting; a token signed by a key not seen yet refetches the JWKS."""

    def __init__(self, options: OidcOptions) -> None:
        self.options = options
        self._keys: jwt.PyJWKClient | None = None
        self._lock = threading.Lock()

    def _jwks(self) -> jwt.PyJWKClient:
        with self._lock:
            if self._keys is None:
                url = self.options.issuer_url.rstrip("/") + "/.well-known/openid-configuration"
                if not url.startswith(("http://", "https://")):
                    raise jwt.PyJWKClientError(f"the issuer URL is not http(s): {url}")
                with urllib.request.urlopen(url, timeout=DISCOVERY_TIMEOUT) as answer:  # noqa: S310 - http(s) only, checked above
                    discovery = json.load(answer)
                if discovery.get("issuer") != self.options.issuer_url:
                    # As kube-apiserver: the discovery document must name the issuer we trust.
                    raise jwt.PyJWKClientError(
                        f"the provider calls itself {discovery.get('issuer')!r}, not "
                        f"{self.options.issuer_url!r}"
                    )
                self._keys = jwt.PyJWKClient(discovery["jwks_uri"], timeout=DISCOVERY_TIMEOUT)
            return self._keys

    def claims(self, token: str) -> dict[str, Any] | None:
        """The token's claims once signature, issuer, audience and expiry hold; else None."""
        try:
            if (
                jwt.decode(token, options={"verify_signature": False}).get("iss")
                != self.options.issuer_url
            ):
                return None  # another issuer's token (or not a JWT): not ours to judge
            key = self._jwks().get_signing_key_from_jwt(token)
            return jwt.decode(
                token,
                key.key,
                algorithms=list(OIDC_ALGORITHMS),
                audience=self.options.client_id,
                issuer=self.options.issuer_url,
                options={"require": ["iss", "aud", "exp"]},
            )
        except (jwt.InvalidTokenError, jwt.PyJWKClientError, OSError, ValueError, KeyError):
            return None

    def user_for_token(self, token: str) -> UserInfo | None:
        claims = self.claims(token)
        if claims is None:
            return None
        options = self.options
        name = claims.get(options.username_claim)
        if not isinstance(name, str) or not name:
            return None
        if options.username_claim == "email" and claims.get("email_verified") is False:
            return None  # kube-apiserver takes an e-mail as a name only once it is verified
        groups: tuple[str, ...] = ()
        if options.groups_claim:
            found = claims.get(options.groups_claim, [])
            found = [found] if isinstance(found, str) else found
            if not isinstance(found, list) or not all(isinstance(g, str) for g in found):
                return None
            groups = tuple(f"{options.groups_prefix}{group}" for group in found)
        return with_authenticated(UserInfo(f"{options.prefix()}{name}", groups=groups))


class Authenticator:
    def __init__(
        self,
        *,
        admin_token: str,
        static_tokens: dict[str, UserInfo] | None = None,
        anonymous: UserInfo = ANONYMOUS,
        service_account_uid: Callable[[str, str], str | None] = lambda ns, name: None,
        oidc: OidcOptions | None = None,
    ) -> None:
        self.admin_token = admin_token
        self.static_tokens = dict(static_tokens or {})
        self.anonymous = anonymous
        self.service_account_uid = service_account_uid
        self.oidc = OidcAuthenticator(oidc) if oidc else None
        self._minted: dict[str, _Minted] = {}
        self._lock = threading.Lock()

    @classmethod
    def token_file(cls, path: str | os.PathLike[str]) -> dict[str, UserInfo]:
        return parse_token_file(Path(path).read_text())

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        """The user a request is from; None when its credentials are wrong (401)."""
        if not authorization:
            return self.anonymous
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.user_for_token(token.strip())

    def user_for_token(self, token: str) -> UserInfo | None:
        if secrets.compare_digest(token, self.admin_token):
            return ADMIN
        if token in self.static_tokens:
            return self.static_tokens[token]
        with self._lock:
            minted = self._minted.get(token)
        if minted is None and self.oidc is not None and token.count(".") == 2:
            return self.oidc.user_for_token(token)
        if minted is None or minted.expires < time.time():
            return None
        if self.service_account_uid(minted.namespace, minted.name) != minted.uid:
            return None  # the ServiceAccount was deleted (or replaced) since
        return service_account_user(minted.namespace, minted.name, minted.uid)

    def mint(
        self,
        namespace: str,
        name: str,
        uid: str,
        *,
        expiration_seconds: int = 3600,
        audiences: tuple[str, ...] = (),
    ) -> tuple[str, str]:
        """A new ServiceAccount token and its expirationTimestamp."""
        token = "kubesandbox-sa." + secrets.token_urlsafe(32)
        expires = time.time() + expiration_seconds
        with self._lock:
            self._minted[token] = _Minted(namespace, name, uid, expires, audiences)
        stamp = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return token, stamp
