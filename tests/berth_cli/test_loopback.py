"""The browser sign-in's loopback listener (berth_cli.loopback): only this sign-in's answer
is taken, a refusal is said as the provider said it, and a token minted for another sign-in
(another nonce) is not handed to kubectl. The provider's token endpoint is an httpx mock;
the listener is real and is called over HTTP as the browser calls it."""

from __future__ import annotations

import threading
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
import requests

from berth_cli import loopback

DISCOVERY = {
    "authorization_endpoint": "https://sso.example.com/authorize",
    "token_endpoint": "https://sso.example.com/token",
}


def run_sign_in(monkeypatch, token_answer):
    """sign_in in a thread, with the token endpoint answering `token_answer(form)`; returns
    the address it printed (as parsed query), a way to wait for its outcome, and the forms
    the token endpoint got."""
    printed: list[str] = []
    shown = threading.Event()

    def record(url, *, browser):
        printed.append(url)
        shown.set()

    monkeypatch.setattr(loopback, "open_browser", record)
    forms: list[dict] = []

    def token_endpoint(request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        forms.append(form)
        return httpx.Response(200, json=token_answer(form))

    outcome: dict = {}

    def sign_in() -> None:
        with httpx.Client(transport=httpx.MockTransport(token_endpoint)) as http:
            try:
                outcome["tokens"] = loopback.sign_in(
                    http,
                    DISCOVERY,
                    client_id="kubernetes",
                    scope="openid groups",
                    listen_on=("127.0.0.1:0",),
                    browser=False,
                    wait_seconds=60,
                )
            except ValueError as refused:
                outcome["refused"] = str(refused)

    thread = threading.Thread(target=sign_in)
    thread.start()
    assert shown.wait(30)
    query = {k: v[0] for k, v in parse_qs(urlsplit(printed[0]).query).items()}
    return query, thread, outcome, forms


def browser_get(url: str, **params: str) -> requests.Response:
    return requests.get(url, params=params, timeout=30)


def id_token(nonce: str) -> str:
    return jwt.encode({"sub": "dev", "nonce": nonce, "exp": 4_000_000_000}, "k" * 32)


def test_the_code_is_exchanged_with_its_pkce_verifier_and_the_id_token_returned(monkeypatch):
    query, thread, outcome, forms = run_sign_in(
        monkeypatch, lambda form: {"id_token": id_token(query["nonce"])}
    )
    assert query["code_challenge_method"] == "S256"
    assert query["redirect_uri"].startswith("http://localhost:")

    page = browser_get(query["redirect_uri"], code="c0de", state=query["state"])
    thread.join(30)

    assert page.status_code == 200 and "You are signed in" in page.text
    assert (
        jwt.decode(outcome["tokens"]["id_token"], options={"verify_signature": False})["sub"]
        == "dev"
    )
    form = forms[0]
    assert form["code"] == "c0de" and form["redirect_uri"] == query["redirect_uri"]
    verifier = form["code_verifier"]
    assert loopback.pkce_challenge(verifier) == query["code_challenge"]


def test_an_answer_for_another_sign_in_is_refused_and_no_code_is_exchanged(monkeypatch):
    query, thread, outcome, forms = run_sign_in(monkeypatch, lambda form: {})

    browser_get(query["redirect_uri"], code="stolen", state="someone-elses")
    thread.join(30)

    assert outcome["refused"] == "the provider's answer is not for this sign-in (state differs)"
    assert forms == []


def test_the_providers_refusal_is_shown_in_the_browser_and_said_in_the_terminal(monkeypatch):
    query, thread, outcome, forms = run_sign_in(monkeypatch, lambda form: {})

    page = browser_get(
        query["redirect_uri"],
        error="access_denied",
        error_description="<b>The person said no</b>",
        state=query["state"],
    )
    thread.join(30)

    assert page.status_code == 400
    assert "Sign-in failed: &lt;b&gt;The person said no&lt;/b&gt;" in page.text
    assert outcome["refused"] == "sign-in refused: <b>The person said no</b>"
    assert forms == []


def test_an_id_token_minted_for_another_nonce_is_not_handed_to_kubectl(monkeypatch):
    query, thread, outcome, _ = run_sign_in(
        monkeypatch, lambda form: {"id_token": id_token("another-sign-ins-nonce")}
    )

    browser_get(query["redirect_uri"], code="c0de", state=query["state"])
    thread.join(30)

    assert outcome["refused"] == "the ID token is not from this sign-in (nonce differs)"


def test_a_visit_that_carries_no_answer_is_not_taken_for_one(monkeypatch):
    query, thread, outcome, _ = run_sign_in(
        monkeypatch, lambda form: {"id_token": id_token(query["nonce"])}
    )

    assert browser_get(query["redirect_uri"] + "/favicon.ico").status_code == 404
    browser_get(query["redirect_uri"], code="c0de", state=query["state"])
    thread.join(30)

    assert "tokens" in outcome


@pytest.mark.parametrize("address", ["nonsense", "127.0.0.1:notaport"])
def test_an_address_that_is_not_host_and_port_is_named(address):
    with pytest.raises(loopback.CannotListen, match="not host:port"):
        loopback.listen([address], loopback.Answer())
