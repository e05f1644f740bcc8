"""`berth token --exec`: kubectl's exec plugin where kubelogin is not installed. It prints
a client.authentication.k8s.io/v1 ExecCredential holding the person's ID token: a cached
one while it is valid, else one from the cached refresh token, else a new sign-in: in a
browser (the authorization code flow with PKCE, answered on a loopback port: berth_cli.
loopback), or with the OAuth 2.0 device authorization grant (RFC 8628) where the provider
offers it and no browser sign-in can be had."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jwt

from berth_cli import loopback
from berth_cli.files import write_private

EXEC_API_VERSION = "client.authentication.k8s.io/v1"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
# An ID token this close to its expiry is not handed to kubectl.
MARGIN_SECONDS = 60
TIMEOUT = 30.0
SCOPE = "openid groups offline_access"
# How a new sign-in happens: a browser where one can be had, else the device grant.
AUTO, BROWSER, DEVICE = "auto", "browser", "device"


class SignInFailed(Exception):
    pass


def cache_file(issuer: str, client_id: str, *, cache_home: str | Path | None = None) -> Path:
    """Where the tokens of one issuer and client are kept ($XDG_CACHE_HOME/berth/oidc/)."""
    base = cache_home or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    key = hashlib.sha256(f"{issuer}\n{client_id}".encode()).hexdigest()[:32]
    return Path(base) / "berth" / "oidc" / f"{key}.json"


def _save(path: Path, tokens: dict[str, Any]) -> None:
    kept = {k: tokens[k] for k in ("id_token", "refresh_token") if tokens.get(k)}
    write_private(path, json.dumps(kept).encode())


def expiry(id_token: str) -> int:
    """The token's `exp` (its signature is the cluster's to check, not ours)."""
    try:
        return int(jwt.decode(id_token, options={"verify_signature": False})["exp"])
    except (jwt.InvalidTokenError, KeyError, TypeError, ValueError):
        return 0


def exec_credential(id_token: str) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(expiry(id_token), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": EXEC_API_VERSION,
        "kind": "ExecCredential",
        "status": {"token": id_token, "expirationTimestamp": stamp},
    }


def discover(http: httpx.Client, issuer: str) -> dict[str, Any]:
    answer = http.get(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if answer.status_code != 200:
        raise SignInFailed(
            f"{issuer} has no OpenID Connect discovery document ({answer.status_code})."
        )
    return answer.json()


def _token(http: httpx.Client, endpoint: str, form: dict[str, str]) -> dict[str, Any]:
    return http.post(endpoint, data=form).json()


def refreshed(
    http: httpx.Client, discovery: dict, client_id: str, refresh_token: str
) -> dict[str, Any] | None:
    answer = _token(
        http,
        discovery["token_endpoint"],
        {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id},
    )
    return answer if answer.get("id_token") else None


def device_sign_in(
    http: httpx.Client, discovery: dict, issuer: str, client_id: str
) -> dict[str, Any]:
    endpoint = discovery.get("device_authorization_endpoint")
    if not endpoint:
        raise SignInFailed(
            f"{issuer} does not offer the device authorization grant, so berth cannot sign "
            "you in without a browser: drop --grant=device, or run it where it can listen on "
            "a loopback port (--listen-address)."
        )
    started = http.post(endpoint, data={"client_id": client_id, "scope": SCOPE}).json()
    if "device_code" not in started:
        raise SignInFailed(
            f"{issuer} refused to start a device sign-in: "
            f"{started.get('error_description') or started.get('error')}"
        )
    where = started.get("verification_uri_complete") or started["verification_uri"]
    print(
        f"To sign in, open {where} and enter the code {started.get('user_code', '')}.",
        file=sys.stderr,
        flush=True,
    )
    interval = int(started.get("interval", 5))
    deadline = time.monotonic() + int(started.get("expires_in", 600))
    while time.monotonic() < deadline:
        time.sleep(interval)  # the provider's pace (RFC 8628 section 3.5)
        answer = _token(
            http,
            discovery["token_endpoint"],
            {
                "grant_type": DEVICE_GRANT,
                "device_code": started["device_code"],
                "client_id": client_id,
            },
        )
        if answer.get("id_token"):
            return answer
        error = answer.get("error")
        if error == "slow_down":
            interval += 5
        elif error != "authorization_pending":
            raise SignInFailed(f"sign-in refused: {answer.get('error_description') or error}")
    raise SignInFailed("the device sign-in expired before it was completed")


def browser_or_device_sign_in(
    http: httpx.Client, discovery: dict, issuer: str, client_id: str, how: SignIn
) -> dict[str, Any]:
    """A new sign-in: in a browser unless `how` says device, or no loopback port is free (or
    the provider has no authorization endpoint) and the provider offers the device grant."""
    if how.grant != DEVICE and discovery.get("authorization_endpoint"):
        try:
            return loopback.sign_in(
                http,
                discovery,
                client_id=client_id,
                scope=SCOPE,
                listen_on=how.listen_on,
                browser=how.open_browser,
                wait_seconds=how.wait_seconds,
            )
        except loopback.CannotListen as busy:
            if how.grant == BROWSER or not discovery.get("device_authorization_endpoint"):
                raise SignInFailed(
                    f"{busy}: free one, or name others with --listen-address."
                ) from None
        except ValueError as refused:
            raise SignInFailed(str(refused)) from None
    return device_sign_in(http, discovery, issuer, client_id)


@dataclass(frozen=True)
class SignIn:
    """How a new sign-in is had, from `berth token`'s options."""

    grant: str = AUTO
    listen_on: tuple[str, ...] = loopback.DEFAULT_LISTEN
    open_browser: bool = True
    wait_seconds: float = loopback.DEFAULT_WAIT_SECONDS


def id_token(
    issuer: str,
    client_id: str,
    *,
    how: SignIn = SignIn(),
    transport: httpx.BaseTransport | None = None,
) -> str:
    path = cache_file(issuer, client_id)
    cached: dict[str, Any] = {}
    if path.exists():
        try:
            cached = json.loads(path.read_text())
        except ValueError:
            cached = {}
    if cached.get("id_token") and expiry(cached["id_token"]) > time.time() + MARGIN_SECONDS:
        return cached["id_token"]
    with httpx.Client(transport=transport, timeout=TIMEOUT) as http:
        discovery = discover(http, issuer)
        tokens = None
        if cached.get("refresh_token"):
            tokens = refreshed(http, discovery, client_id, cached["refresh_token"])
        if tokens is None:
            tokens = browser_or_device_sign_in(http, discovery, issuer, client_id, how)
    _save(
        path,
        {**tokens, "refresh_token": tokens.get("refresh_token") or cached.get("refresh_token")},
    )
    return tokens["id_token"]
