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
from tests.support.cluster import trusting_provider
from tests.support.id_tokens import follow_sign_in
from tests.support.oidc_provider import running_dev_idp

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
            "--oidc-client-id=kubernetes",
            "--grant=device",
            home=tmp_path,
        )

    assert refused.returncode == 1
    assert "does not offer the device authorization grant" in refused.stderr
    assert "drop --grant=device" in refused.stderr
    assert refused.stdout == ""


def test_token_exec_says_which_ports_are_busy_when_it_cannot_listen_and_has_no_device_grant(
    tmp_path,
):
    import socket

    (tmp_path / "idp").mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = f"127.0.0.1:{busy.getsockname()[1]}"
        with running_dev_idp(berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp") as issuer:
            refused = berth(
                "token",
                "--exec",
                f"--oidc-issuer-url={issuer}",
                "--oidc-client-id=kubernetes",
                f"--listen-address={taken}",
                home=tmp_path,
            )

    assert refused.returncode == 1
    assert f"cannot listen for the provider's answer on {taken}" in refused.stderr
    assert "--listen-address" in refused.stderr
    assert refused.stdout == ""


def test_kubectl_with_berths_kubeconfig_is_answered_for_the_person_themselves(
    live_server, settings, tmp_path, client
):
    """The README's promise: a namespace Ready, `berth kubeconfig` (or the same kubeconfig
    from the namespace page's "Use it"), and `kubectl get pods` answered by the stand-in for
    `dev` as `dev`: kubectl runs `berth token --exec` (by the kubeconfig's absolute path, no
    virtualenv on PATH), which prints the development provider's sign-in address; `dev`
    signs in there and consents, the provider's answer reaches berth's loopback port, and
    kubectl goes on with the ID token. No token is seeded; the second kubectl is answered
    from berth's cache, with no sign-in."""
    import shutil

    from portal.celery import app as celery_app

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    (tmp_path / "idp").mkdir()
    with (
        running_dev_idp(berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp") as issuer,
        trusting_provider(issuer, settings),
    ):
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
        assert yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["exec"]["command"] == str(
            Path(sys.executable).parent / "berth"
        )
        environment = {
            **{k: v for k, v in os.environ.items() if not k.startswith("BERTH_")},
            # Not the virtualenv's bin: the kubeconfig names berth by its path.
            "PATH": os.pathsep.join(
                part
                for part in os.environ["PATH"].split(os.pathsep)
                if Path(part) != Path(sys.executable).parent
            ),
            "KUBECONFIG": str(kubeconfig),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "HOME": str(tmp_path),
            "BROWSER": "true",  # no browser opens: the test is the person
        }

        def kubectl_says(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [kubectl, *args], env=environment, capture_output=True, text=True, timeout=60
            )

        first = subprocess.Popen(
            [kubectl, "get", "pods", "-n", "payments-kube-dev"],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        said = []
        for line in first.stderr:
            said.append(line)
            if line.strip().startswith(f"{issuer}/authorize?"):
                break
        else:
            first.wait()
            raise AssertionError("kubectl printed no sign-in address:\n" + "".join(said))
        landed = follow_sign_in(issuer, line.strip(), "dev")
        assert landed.status_code == 200 and "You are signed in" in landed.text
        out, rest = first.communicate(timeout=60)
        assert first.returncode == 0, "".join(said) + rest
        assert "No resources found in payments-kube-dev namespace." in rest

        pods = kubectl_says("get", "pods", "-n", "payments-kube-dev")
        assert pods.returncode == 0, pods.stderr
        assert "To sign in" not in pods.stderr  # from berth's cache
        assert "No resources found in payments-kube-dev namespace." in pods.stderr
        whoami = kubectl_says("auth", "whoami", "-o", "json")
        assert whoami.returncode == 0, whoami.stderr
        user = json.loads(whoami.stdout)["status"]["userInfo"]
        assert user["username"] == "oidc:devidp-dev" and "payments-devs" in user["groups"]
        assert kubectl_says("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
        assert kubectl_says("auth", "can-i", "create", "rolebindings").stdout.strip() == "no"
