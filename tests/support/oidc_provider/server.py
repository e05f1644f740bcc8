"""The test provider's HTTP side (run as `python -m tests.support.oidc_provider`): discovery,
JWKS, authorize (redirects straight back with a code, for whoever the test said signs in
next), token (checks the client secret, the redirect URI and the PKCE verifier; answers the
tokens `tokens.minted` signs), userinfo and end-session, and the control endpoints that choose
the next person's claims, the access token's form and one defect (contract.DEFECTS), and
show what was asked of it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.oidc_provider.contract import (
    ACCESS_TOKEN_FORMS,
    API_AUDIENCE,
    CLIENT_ID,
    CLIENT_SECRET,
    DEFECTS,
)
from tests.support.oidc_provider.tokens import minted, new_key, public_jwk


@dataclass
class ProviderState:
    issuer: str
    client_id: str
    client_secret: str
    key: rsa.RSAPrivateKey = field(default_factory=new_key)
    impostor_key: rsa.RSAPrivateKey = field(default_factory=new_key)
    kid: str = field(default_factory=lambda: secrets.token_hex(8))
    next_login: dict[str, Any] = field(default_factory=dict)
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    access_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


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
        self._json(200, {"keys": [public_jwk(self.state.key, self.state.kid)]})

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
        encoded, access_token, claims = minted(
            grant,
            issuer=self.state.issuer,
            client_id=self.state.client_id,
            key=self.state.key,
            impostor_key=self.state.impostor_key,
            kid=self.state.kid,
        )
        with self.state.lock:
            self.state.access_tokens[access_token] = claims
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
