"""The stand-in takes OpenID Connect ID tokens as kube-apiserver does with `--oidc-*`: a
token the development identity provider minted is a user with its groups; a token signed by
another key, for another client, or expired is 401. `make run` starts it with those flags.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kubesandbox import KubeSandbox
from kubesandbox.authn import OidcOptions
from portal.sandbox import OIDC_USERNAME_PREFIX, oidc_options
from tests.support.authz import whoami
from tests.support.id_tokens import id_token_of
from tests.support.oidc_provider import CLIENT_ID, running_dev_idp

ROOT = Path(__file__).resolve().parents[2]
BERTH_URL = "http://127.0.0.1:9"  # only named in redirect URIs: never called


@pytest.fixture(scope="module")
def dev_idp(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("devidp")
    with running_dev_idp(berth_url=BERTH_URL, data_dir=data_dir) as issuer:
        yield issuer, data_dir


def resigned(token: str, key, **changes) -> str:
    """The same token with `changes` to its claims, signed by `key` under the same kid."""
    claims = {**jwt.decode(token, options={"verify_signature": False}), **changes}
    return jwt.encode(
        claims, key, algorithm="RS256", headers={"kid": jwt.get_unverified_header(token)["kid"]}
    )


@pytest.fixture(scope="module")
def sandbox(dev_idp):
    issuer, _ = dev_idp
    options = OidcOptions(
        issuer_url=issuer,
        client_id=CLIENT_ID,
        username_claim="sub",
        username_prefix=OIDC_USERNAME_PREFIX,
        groups_claim="groups",
    )
    with KubeSandbox(token="admin-token", oidc=options) as running:
        yield running


@pytest.mark.processes
def test_an_id_token_from_the_provider_is_its_person_with_their_groups(dev_idp, sandbox):
    issuer, _ = dev_idp
    answer = whoami(sandbox.url, id_token_of(issuer, "dev"))

    assert answer.status_code == 201, answer.text
    user = answer.json()["status"]["userInfo"]
    assert user["username"] == "oidc:devidp-dev"
    assert "payments-devs" in user["groups"]
    assert "system:authenticated" in user["groups"]


def test_tokens_the_provider_did_not_sign_for_this_cluster_are_refused(dev_idp, sandbox):
    issuer, data_dir = dev_idp
    token = id_token_of(issuer, "dev")
    provider_key = serialization.load_pem_private_key(
        (data_dir / "devidp-signing-key.pem").read_bytes(), password=None
    )
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert whoami(sandbox.url, resigned(token, provider_key)).status_code == 201  # the control

    refused = {
        "another key": resigned(token, impostor),
        "another client": resigned(token, provider_key, aud="someone-else"),
        "expired": resigned(token, provider_key, exp=int(time.time()) - 60),
        "another issuer": resigned(token, provider_key, iss="https://elsewhere.example"),
    }
    for why, bad in refused.items():
        assert whoami(sandbox.url, bad).status_code == 401, why


@pytest.mark.processes
def test_make_runs_stand_in_command_trusts_the_provider(dev_idp):
    """`python -m kubesandbox` with the flags portal.sandbox gives it under `make run`."""
    issuer, _ = dev_idp
    command = [
        sys.executable,
        "-m",
        "kubesandbox",
        "--port",
        "0",
        "--token",
        "admin-token",
        *oidc_options(issuer=issuer, client_id=CLIENT_ID),
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip().removeprefix("listening on ")
        answer = whoami(url, id_token_of(issuer, "dev"))
        assert answer.status_code == 201, answer.text
        assert answer.json()["status"]["userInfo"]["username"] == "oidc:devidp-dev"
    finally:
        process.terminate()
        process.wait(timeout=30)
