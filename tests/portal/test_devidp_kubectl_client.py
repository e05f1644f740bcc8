"""kubectl's own client of the development provider, as `make run` registers it: public (a
kubeconfig can hold no secret), signed in as kubelogin does (the code flow with PKCE, the
answer to a loopback port), and the audience the sandbox cluster trusts, so `kubectl get
pods` is answered for the person themselves. Berth's confidential client's tokens are not
kubectl's, and the public client answers no other redirect."""

from __future__ import annotations

import jwt
import pytest
import requests

from kubesandbox import KubeSandbox
from kubesandbox.authn import OidcOptions
from portal.sandbox import OIDC_USERNAME_PREFIX
from tests.support.authz import ca_file_of, whoami
from tests.support.id_tokens import id_token_of, signed_in_tokens
from tests.support.oidc_provider import KUBECTL_CLIENT_ID, running_dev_idp

KUBELOGIN = {"client_id": KUBECTL_CLIENT_ID, "client_secret": None}


@pytest.fixture(scope="module")
def dev_idp(tmp_path_factory):
    with running_dev_idp(
        berth_url="http://127.0.0.1:9", data_dir=tmp_path_factory.mktemp("devidp")
    ) as running:
        yield running


def whoami_in(sandbox: KubeSandbox, token: str) -> requests.Response:
    return whoami(sandbox.url, token, verify=ca_file_of(sandbox))


@pytest.mark.parametrize("redirect_uri", ["http://localhost:8000", "http://localhost:18000"])
@pytest.mark.processes
def test_kubelogin_signs_in_without_a_secret_and_the_cluster_knows_the_person(
    dev_idp, redirect_uri
):
    tokens = signed_in_tokens(dev_idp, "dev", redirect_uri=redirect_uri, **KUBELOGIN)
    claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
    assert claims["aud"] == KUBECTL_CLIENT_ID and "payments-devs" in claims["groups"]

    options = OidcOptions(
        issuer_url=dev_idp,
        client_id=KUBECTL_CLIENT_ID,
        username_prefix=OIDC_USERNAME_PREFIX,
        groups_claim="groups",
    )
    with KubeSandbox(tls=True, oidc=options, anonymous_user=None) as sandbox:
        answer = whoami_in(sandbox, tokens["id_token"])
        assert answer.status_code == 201, answer.text
        user = answer.json()["status"]["userInfo"]
        assert user["username"] == f"{OIDC_USERNAME_PREFIX}devidp-dev"
        assert "payments-devs" in user["groups"]
        # Berth's own client's ID token is for Berth, not for the cluster.
        assert whoami_in(sandbox, id_token_of(dev_idp, "dev")).status_code == 401


def test_the_public_client_answers_no_other_redirect(dev_idp):
    answer = requests.get(
        f"{dev_idp}/authorize",
        params={
            "client_id": KUBECTL_CLIENT_ID,
            "redirect_uri": "http://attacker.example:8000",
            "response_type": "code",
            "scope": "openid groups",
            "code_challenge": "x" * 43,
            "code_challenge_method": "S256",
        },
        allow_redirects=False,
        timeout=10,
    )
    assert "attacker.example" not in answer.headers.get("Location", "")
    assert "redirect_uri" in answer.text.lower() or answer.status_code >= 400
