"""Sign-in in a browser for `berth token --exec`: the OAuth 2.0 authorization code flow with
PKCE (RFC 7636) for a native app, whose answer comes back to a listener on the loopback
interface (RFC 8252 section 7.3), as kubelogin does it. The browser is opened where there is
one; the URL is always printed too, for a terminal on another machine."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import secrets
import sys
import threading
import webbrowser
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt

# kubelogin's defaults, which providers set up for kubelogin have registered: its port, and
# the one it falls back to when something (such as Berth's own `make run`) holds 8000.
DEFAULT_LISTEN = ("127.0.0.1:8000", "127.0.0.1:18000")
DEFAULT_WAIT_SECONDS = 180


class CannotListen(Exception):
    """None of the loopback addresses is free."""


@dataclass
class Answer:
    """What the provider's redirect brought back to the listener."""

    params: dict[str, str] = field(default_factory=dict)
    arrived: threading.Event = field(default_factory=threading.Event)


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a PKCE code verifier."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _handler(answer: Answer) -> type[BaseHTTPRequestHandler]:
    class Callback(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            if "code" not in query and "error" not in query:
                self.send_error(404)  # a favicon, a stray visit: not the provider's answer
                return
            answer.params = {key: values[0] for key, values in query.items()}
            failed = answer.params.get("error")
            said = (
                f"Sign-in failed: {html.escape(answer.params.get('error_description') or failed)}"
                if failed
                else "You are signed in. You may close this window and go back to the terminal."
            )
            body = f"<!doctype html><title>berth</title><p>{said}</p>".encode()
            self.send_response(400 if failed else 200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            answer.arrived.set()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # stdout belongs to kubectl's ExecCredential; nothing for stderr either

    return Callback


def listen(addresses: Sequence[str], answer: Answer) -> HTTPServer:
    """A server on the first free `host:port` of `addresses` (port 0: any free port)."""
    tried = []
    for address in addresses:
        host, _, port = address.rpartition(":")
        try:
            return HTTPServer((host or "127.0.0.1", int(port)), _handler(answer))
        except OSError as refused:
            tried.append(f"{address} ({refused.strerror or refused})")
        except ValueError:
            tried.append(f"{address} (not host:port)")
    raise CannotListen("cannot listen for the provider's answer on " + ", ".join(tried))


def redirect_uri(server: HTTPServer) -> str:
    """kubelogin's form, which providers set up for it have registered: localhost, no path."""
    return f"http://localhost:{server.server_address[1]}"


def open_browser(url: str, *, browser: bool) -> None:
    print(f"To sign in, open this address in a browser:\n  {url}", file=sys.stderr, flush=True)
    if browser:
        with contextlib.suppress(webbrowser.Error):  # none here: the address printed is the way
            webbrowser.open(url)


def sign_in(
    http: httpx.Client,
    discovery: dict,
    *,
    client_id: str,
    scope: str,
    listen_on: Sequence[str] = DEFAULT_LISTEN,
    browser: bool = True,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
) -> dict[str, Any]:
    """Tokens from the authorization code flow with PKCE. Raises CannotListen when no
    loopback address is free, and ValueError for an answer that is not this sign-in's."""
    answer = Answer()
    server = listen(listen_on, answer)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        verifier = secrets.token_urlsafe(64)
        challenge = pkce_challenge(verifier)
        state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        redirect = redirect_uri(server)
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "scope": scope,
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        open_browser(f"{discovery['authorization_endpoint']}?{urlencode(query)}", browser=browser)
        if not answer.arrived.wait(wait_seconds):
            raise ValueError(f"no sign-in came back within {int(wait_seconds)} seconds")
    finally:
        server.shutdown()
        server.server_close()
    params = answer.params
    if params.get("state") != state:
        raise ValueError("the provider's answer is not for this sign-in (state differs)")
    if params.get("error"):
        raise ValueError(f"sign-in refused: {params.get('error_description') or params['error']}")
    tokens = http.post(
        discovery["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": redirect,
            "client_id": client_id,
            "code_verifier": verifier,
        },
    ).json()
    if not tokens.get("id_token"):
        said = tokens.get("error_description") or tokens.get("error")
        raise ValueError(f"the provider gave no ID token: {said}")
    # The signature is the cluster's to check; the nonce is ours (no token injected here).
    claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
    if claims.get("nonce") != nonce:
        raise ValueError("the ID token is not from this sign-in (nonce differs)")
    return tokens
