"""`berth token --exec`, kubectl's credential plugin: an ExecCredential from the ID token
in its cache, a clear refusal when the provider offers no device sign-in, and from a
namespace Ready to `kubectl get pods` answered for the person themselves, with the
kubeconfig `berth kubeconfig` wrote and an ID token of the development provider.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jwt
import pytest
import yaml

from tenants.models import Namespace, Request, User
from tests.support.api import token_for
from tests.support.berth_cli import ISSUER, berth
from tests.support.cluster import ca_of, seed_demo, stand_in
from tests.support.id_tokens import id_token_of
from tests.support.oidc_provider import CLIENT_ID, running_dev_idp

# Each test here starts a program (git, kubectl, python): make test-fast leaves them out.
pytestmark = pytest.mark.processes


def test_token_exec_prints_an_exec_credential_from_the_cached_id_token(tmp_path):
    from berth_cli.oidc import cache_file

    expires = int(time.time()) + 3600
    id_token = jwt.encode({"iss": ISSUER, "sub": "dev", "exp": expires}, "k" * 32)
    cached = cache_file(ISSUER, "kubernetes", cache_home=tmp_path / "cache")
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps({"id_token": id_token}))

    shown = berth(
        "token",
        "--exec",
        f"--oidc-issuer-url={ISSUER}",
        "--oidc-client-id=kubernetes",
        home=tmp_path,
    )

    assert shown.returncode == 0, shown.stderr
    credential = json.loads(shown.stdout)
    assert credential["apiVersion"] == "client.authentication.k8s.io/v1"
    assert credential["kind"] == "ExecCredential"
    assert credential["status"]["token"] == id_token
    assert credential["status"]["expirationTimestamp"] == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires)
    )


def test_token_exec_says_so_when_the_provider_offers_no_device_sign_in(tmp_path):
    (tmp_path / "idp").mkdir()
    with running_dev_idp(berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp") as issuer:
        refused = berth(
            "token",
            "--exec",
            f"--oidc-issuer-url={issuer}",
            "--oidc-client-id=berth-test",
            home=tmp_path,
        )

    assert refused.returncode == 1
    assert "does not offer the device authorization grant" in refused.stderr
    assert "kubelogin" in refused.stderr
    assert refused.stdout == ""


def test_kubectl_with_berths_kubeconfig_is_answered_for_the_person_themselves(
    live_server, settings, tmp_path, client
):
    """The README's promise: a namespace Ready, `berth kubeconfig` (or the same kubeconfig
    from the namespace page's "Use it"), and `kubectl get pods` answered by the stand-in for
    `dev` as `dev` (an ID token of the development provider, handed to kubectl by `berth token
    --exec` from its cache)."""
    import shutil

    from berth_cli.oidc import cache_file
    from kubesandbox.authn import OidcOptions
    from portal.celery import app as celery_app
    from portal.sandbox import OIDC_USERNAME_PREFIX

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    (tmp_path / "idp").mkdir()
    with running_dev_idp(berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp") as issuer:
        options = OidcOptions(
            issuer_url=issuer,
            client_id=CLIENT_ID,
            username_prefix=OIDC_USERNAME_PREFIX,
            groups_claim="groups",
        )
        with stand_in(tls=True, oidc=options) as sandbox:
            seed_demo(sandbox, guardrails=True, sandbox_ca=ca_of(sandbox))
            settings.KUBE_OIDC_ISSUER_URL = issuer
            settings.KUBE_OIDC_CLIENT_ID = CLIENT_ID
            settings.BERTH_API_RATE = "100000/min"
            celery_app.conf.task_always_eager = True
            try:
                token = token_for(User.objects.get(username="dev"))
                asked = berth(
                    "request",
                    "namespace",
                    "--app",
                    "kube",
                    "--tier",
                    "dev",
                    "--cluster",
                    "sandbox",
                    "--cpu",
                    "500m",
                    "--memory",
                    "512Mi",
                    token=token,
                    url=live_server.url,
                    home=tmp_path,
                )
                assert asked.returncode == 0, asked.stderr
                assert Request.objects.get(payload__app="kube").state == "ready"
                kubeconfig = tmp_path / "kube.kubeconfig"
                got = berth(
                    "kubeconfig",
                    "payments-kube-dev",
                    "--credentials",
                    "berth",
                    "-o",
                    str(kubeconfig),
                    token=token,
                    url=live_server.url,
                    home=tmp_path,
                )
                assert got.returncode == 0, got.stderr
                # The namespace page's "Use it" panel hands out the same kubeconfig.
                client.force_login(User.objects.get(username="dev"))
                namespace = Namespace.objects.get(name="payments-kube-dev")
                panel = client.get(f"/namespaces/{namespace.pk}/?credentials=berth")
                shown = html.unescape(panel.content.decode())
                shown = shown.split('<pre class="yaml kubeconfig"><code>')[1].split("</code>")[0]
                assert yaml.safe_load(shown) == yaml.safe_load(kubeconfig.read_text())
            finally:
                celery_app.conf.task_always_eager = False
            # dev has signed in before: kubectl's plugin finds the ID token in its cache.
            cached = cache_file(issuer, CLIENT_ID, cache_home=tmp_path / "cache")
            cached.parent.mkdir(parents=True)
            cached.write_text(json.dumps({"id_token": id_token_of(issuer, "dev")}))
            environment = {
                **{k: v for k, v in os.environ.items() if not k.startswith("BERTH_")},
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "KUBECONFIG": str(kubeconfig),
                "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "HOME": str(tmp_path),
            }

            def kubectl_says(*args: str) -> subprocess.CompletedProcess:
                return subprocess.run(
                    [kubectl, *args], env=environment, capture_output=True, text=True, timeout=60
                )

            pods = kubectl_says("get", "pods", "-n", "payments-kube-dev")
            assert pods.returncode == 0, pods.stderr
            assert "No resources found in payments-kube-dev namespace." in pods.stderr
            whoami = kubectl_says("auth", "whoami", "-o", "json")
            assert whoami.returncode == 0, whoami.stderr
            user = json.loads(whoami.stdout)["status"]["userInfo"]
            assert user["username"] == "oidc:devidp-dev" and "payments-devs" in user["groups"]
            assert kubectl_says("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
            assert kubectl_says("auth", "can-i", "create", "rolebindings").stdout.strip() == "no"
