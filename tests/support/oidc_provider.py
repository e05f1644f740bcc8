"""OpenID Connect providers for end-to-end tests, each started in a process of its own.

1. A small provider the tests control (run as `python -m tests.support.oidc_provider`): discovery,
   JWKS, authorize (redirects straight back with a code, for whoever the test said signs in
   next), token (checks the client secret, the redirect URI and the PKCE verifier; answers
   an ID token and an access token, in one of ACCESS_TOKEN_FORMS), userinfo and end-session.
   A control endpoint chooses the next person's claims, the access token's form and, for
   negative tests, one defect in what comes back (see DEFECTS).
2. The development provider Berth ships (`python -m portal.devidp`, django-oidc-provider).

`running_test_provider()` and `running_dev_idp()` start them on free ports and stop them.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "berth-test"
CLIENT_SECRET = "test-client-secret-0123456789"
# The audience of the access tokens it mints: Berth's API, not its client.
API_AUDIENCE = "berth-api"
# How the next sign-in's access token looks (`access_token` of next_login):
ACCESS_TOKEN_FORMS = {
    "at+jwt": "an RFC 9068 JWT: header typ at+jwt, audience API_AUDIENCE (the default)",
    "jwt": "the same claims under a plain typ JWT header, as Keycloak and Entra ID send",
    "opaque": "a random string only the userinfo endpoint understands",
}

DEFECTS = {
    "tampered_signature": "the ID token is signed by another key under the provider's kid",
    "wrong_audience": "the ID token is for another client, the access token for another API",
    "expired": "the ID and access tokens expired ten minutes ago",
    "wrong_issuer": "the ID and access tokens name another issuer",
    "wrong_nonce": "the ID token answers another sign-in",
    "no_sub": "neither the ID token nor userinfo says who signed in",
    "drop_state": "the redirect back to Berth carries no state",
    "access_denied": "the provider redirects back with error=access_denied",
}


# --- the provider (runs in its own process) ------------------------------------------------
@dataclass
class ProviderState:
    issuer: str
    client_id: str
    client_secret: str
    key: rsa.RSAPrivateKey = field(default_factory=lambda: _new_key())
    impostor_key: rsa.RSAPrivateKey = field(default_factory=lambda: _new_key())
    kid: str = field(default_factory=lambda: secrets.token_hex(8))
    next_login: dict[str, Any] = field(default_factory=dict)
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    access_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64url_uint(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer  # with a .state

    @property
    def state(self) -> ProviderState:
        return self.server.state  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        return

    # -- plumbing ---------------------------------------------------------------------------
    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _form(self) -> dict[str, str]:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        if self.headers.get("Content-Type", "").startswith("application/json"):
            return json.loads(body or "{}")
        return {name: values[0] for name, values in parse_qs(body).items()}

    def _record(self, event: str, **details: Any) -> None:
        with self.state.lock:
            self.state.log.append({"event": event, **details})

    # -- endpoints --------------------------------------------------------------------------
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        route = {
            "/.well-known/openid-configuration": self.discovery,
            "/jwks": self.jwks,
            "/authorize": self.authorize,
            "/userinfo": self.userinfo,
            "/end_session": self.end_session,
            "/control/log": self.control_log,
        }.get(url.path)
        if route is None:
            self._json(404, {"error": "not_found"})
        else:
            route(query)

    def do_POST(self) -> None:
        route = {
            "/token": self.token,
            "/control/next-login": self.control_next_login,
        }.get(urlsplit(self.path).path)
        if route is None:
            self._json(404, {"error": "not_found"})
        else:
            route(self._form())

    def discovery(self, query: dict[str, str]) -> None:
        self._record("discovery")
        base = self.state.issuer
        self._json(
            200,
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "userinfo_endpoint": f"{base}/userinfo",
                "jwks_uri": f"{base}/jwks",
                "end_session_endpoint": f"{base}/end_session",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
            },
        )

    def jwks(self, query: dict[str, str]) -> None:
        numbers = self.state.key.public_key().public_numbers()
        key = {
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": self.state.kid,
            "n": _b64url_uint(numbers.n),
            "e": _b64url_uint(numbers.e),
        }
        self._json(200, {"keys": [key]})

    def authorize(self, query: dict[str, str]) -> None:
        redirect_uri = query.get("redirect_uri", "")
        if query.get("client_id") != self.state.client_id or not redirect_uri:
            self._json(400, {"error": "invalid_client"})
            return
        # Berth must use PKCE: refuse a request without an S256 code challenge.
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            self._json(400, {"error": "invalid_request", "error_description": "PKCE required"})
            return
        with self.state.lock:
            login = dict(self.state.next_login)
        defect = login.get("defect")
        self._record("authorize", scope=query.get("scope", ""), has_nonce="nonce" in query)
        params: dict[str, str] = {}
        if defect == "access_denied":
            params["error"] = "access_denied"
        else:
            code = secrets.token_urlsafe(16)
            with self.state.lock:
                self.state.codes[code] = {
                    "claims": login.get("claims", {}),
                    "defect": defect,
                    "access_token": login.get("access_token", "at+jwt"),
                    "audience": login.get("audience", API_AUDIENCE),
                    "nonce": query.get("nonce"),
                    "challenge": query["code_challenge"],
                    "redirect_uri": redirect_uri,
                }
            params["code"] = code
        if defect != "drop_state" and "state" in query:
            params["state"] = query["state"]
        separator = "&" if "?" in redirect_uri else "?"
        self._redirect(f"{redirect_uri}{separator}{urlencode(params)}")

    def token(self, form: dict[str, str]) -> None:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
        if client_id != self.state.client_id or secret != self.state.client_secret:
            self._json(401, {"error": "invalid_client"})
            return
        with self.state.lock:
            grant = self.state.codes.pop(form.get("code", ""), None)  # single use
        verifier = form.get("code_verifier", "")
        self._record("token", has_code_verifier=bool(verifier))
        if grant is None or form.get("redirect_uri") != grant["redirect_uri"]:
            self._json(400, {"error": "invalid_grant"})
            return
        digest = hashlib.sha256(verifier.encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["challenge"]:
            self._json(400, {"error": "invalid_grant", "error_description": "PKCE mismatch"})
            return
        claims, defect = dict(grant["claims"]), grant["defect"]
        if defect == "no_sub":
            claims.pop("sub", None)
        now = int(time.time())
        id_token = {
            **claims,
            "iss": self.state.issuer,
            "aud": self.state.client_id,
            "iat": now,
            "exp": now + 300,
            "nonce": grant["nonce"],
        }
        access = {
            "iss": self.state.issuer,
            "sub": claims.get("sub"),
            "aud": grant["audience"],
            "client_id": self.state.client_id,
            "scope": "openid",
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_hex(12),
            **{name: claims[name] for name in ("groups",) if name in claims},
        }
        key = self.state.key
        if defect == "tampered_signature":
            key = self.state.impostor_key
        elif defect == "wrong_audience":
            id_token["aud"], access["aud"] = "another-client", "another-api"
        elif defect == "expired":
            id_token["iat"], id_token["exp"] = now - 1200, now - 600
            access["iat"], access["exp"] = now - 1200, now - 600
        elif defect == "wrong_issuer":
            id_token["iss"] = access["iss"] = "https://impostor.example.com"
        elif defect == "wrong_nonce":
            id_token["nonce"] = "not-this-sign-in"
        form = grant["access_token"]
        if form == "opaque":
            access_token = secrets.token_urlsafe(24)
        else:
            typ = "at+jwt" if form == "at+jwt" else "JWT"
            access_token = jwt.encode(
                access, key, algorithm="RS256", headers={"kid": self.state.kid, "typ": typ}
            )
        with self.state.lock:
            self.state.access_tokens[access_token] = claims
        encoded = jwt.encode(id_token, key, algorithm="RS256", headers={"kid": self.state.kid})
        self._json(
            200,
            {
                "access_token": access_token,
                "token_type": "Bearer",
                "expires_in": 300,
                "id_token": encoded,
            },
        )

    def userinfo(self, query: dict[str, str]) -> None:
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        with self.state.lock:
            claims = self.state.access_tokens.get(token)
        if claims is None:
            self._json(401, {"error": "invalid_token"})
        else:
            self._json(200, claims)

    def end_session(self, query: dict[str, str]) -> None:
        self._record(
            "end_session",
            id_token_hint=bool(query.get("id_token_hint")),
            post_logout_redirect_uri=query.get("post_logout_redirect_uri", ""),
        )
        self._redirect(query.get("post_logout_redirect_uri") or f"{self.state.issuer}/")

    def control_next_login(self, body: dict[str, Any]) -> None:
        defect = body.get("defect")
        if defect is not None and defect not in DEFECTS:
            self._json(400, {"error": f"unknown defect {defect!r}"})
            return
        form = body.get("access_token") or "at+jwt"
        if form not in ACCESS_TOKEN_FORMS:
            self._json(400, {"error": f"unknown access token form {form!r}"})
            return
        with self.state.lock:
            self.state.next_login = {
                "claims": body.get("claims", {}),
                "defect": defect,
                "access_token": form,
                "audience": body.get("audience") or API_AUDIENCE,
            }
        self._json(200, {"ok": True})

    def control_log(self, query: dict[str, str]) -> None:
        with self.state.lock:
            self._json(200, list(self.state.log))


def serve(*, host: str, port: int, client_id: str, client_secret: str) -> None:
    server = ThreadingHTTPServer((host, port), Handler)
    issuer = f"http://{host}:{server.server_address[1]}"
    server.state = ProviderState(issuer=issuer, client_id=client_id, client_secret=client_secret)  # type: ignore[attr-defined]
    print(f"ready {issuer}", flush=True)
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description="A controllable OIDC provider for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--client-id", default=CLIENT_ID)
    parser.add_argument("--client-secret", default=CLIENT_SECRET)
    args = parser.parse_args()
    serve(
        host=args.host, port=args.port, client_id=args.client_id, client_secret=args.client_secret
    )


# --- the test side ------------------------------------------------------------------------
@dataclass
class TestProvider:
    url: str
    __test__ = False  # not a test class, whatever pytest thinks of the name

    def next_login(
        self,
        claims: dict[str, Any],
        defect: str | None = None,
        *,
        access_token_form: str = "at+jwt",
        audience: str = API_AUDIENCE,
    ) -> None:
        response = requests.post(
            f"{self.url}/control/next-login",
            json={
                "claims": claims,
                "defect": defect,
                "access_token": access_token_form,
                "audience": audience,
            },
            timeout=5,
        )
        response.raise_for_status()

    def log(self, event: str | None = None) -> list[dict[str, Any]]:
        entries = requests.get(f"{self.url}/control/log", timeout=5).json()
        return [entry for entry in entries if event is None or entry["event"] == event]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def running_test_provider() -> Iterator[TestProvider]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.oidc_provider", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line.startswith("ready "):
            raise RuntimeError(f"the test OIDC provider did not start: {line!r}")
        yield TestProvider(url=line.split()[1])
    finally:
        _stop(process)


@contextmanager
def running_dev_idp(*, berth_url: str, data_dir: Path, env: dict[str, str]) -> Iterator[str]:
    """Berth's development provider on a free port, with Berth's client registered."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = data_dir / "devidp.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "portal.devidp", "--port", str(port)],
            cwd=ROOT,
            env={
                **env,
                "BERTH_DEBUG": "1",
                "BERTH_DEV_OIDC": "1",
                "BERTH_DATA_DIR": str(data_dir),
                "DEVIDP_URL": url,
                "DEVIDP_BERTH_URLS": berth_url,
                "OIDC_CLIENT_ID": CLIENT_ID,
                "OIDC_CLIENT_SECRET": CLIENT_SECRET,
            },
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/openid/jwks", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the development provider did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield f"{url}/openid"
    finally:
        _stop(process)


if __name__ == "__main__":
    main()
