"""Access on request, end to end, as the person lives it: sam (of search) holds an ID token of
the development provider for kubectl's client, kept where `berth token --exec` finds it, and
the kubeconfig Berth hands out for a payments namespace. Before the grant the TLS stand-in
(trusting that provider, as kube-apiserver's --oidc-* flags do) says no; after a payments
owner approves, yes; past its end (the watcher knows it, no job run by hand) no again; and a
second grant revoked early stops within seconds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from provisioning import reconcile
from tenants import services
from tenants.choices import NamespaceState, RequestState
from tenants.models import AccessGrant, AuditEvent, Namespace, User
from tenants.selectors import review
from tenants.selectors.kubeconfig import BERTH, use_it
from tests.support.cluster import trusting_provider
from tests.support.id_tokens import code_flow_tokens, signed_in_session
from tests.support.oidc_provider import KUBECTL_CLIENT_ID, running_dev_idp
from tests.support.watching import eventually, synced, watcher

# Starts the provider, the stand-in and kubectl: make test-fast leaves it out.
pytestmark = pytest.mark.processes


def kubectl_id_token(issuer: str, username: str) -> str:
    """What `berth token --exec` gets at sign-in: the provider's ID token for kubectl's
    client (public, loopback redirect), with the groups claim."""
    tokens = code_flow_tokens(
        issuer,
        redirect_uri="http://127.0.0.1:8000",
        scope="openid profile email groups offline_access",
        session=signed_in_session(issuer, username),
        client_id=KUBECTL_CLIENT_ID,
        client_secret=None,
    )
    return tokens["id_token"]


def test_a_grant_opens_kubectl_for_its_time_and_no_longer(
    transactional_db, settings, tmp_path, monkeypatch
):
    from berth_cli.oidc import cache_file
    from portal.celery import app as celery_app

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    (tmp_path / "idp").mkdir()
    # The stand-in runs in this process, so it checks ID tokens' expiry on the clock the test
    # moves past the grant's end: a token of two hours outlives the 15 minutes travelled.
    monkeypatch.setenv("DEVIDP_ID_TOKEN_SECONDS", "7200")
    with (
        running_dev_idp(berth_url="http://127.0.0.1:9", data_dir=tmp_path / "idp") as issuer,
        trusting_provider(issuer, settings),
    ):
        owner, sam = User.objects.get(username="olivia"), User.objects.get(username="sam")
        made = services.submit_request(
            tenant=owner.memberships.get().tenant,
            kind="namespace",
            requester=owner,
            payload={
                "app": "shop",
                "tier": "dev",
                "cluster": "sandbox",
                "cpu": "500m",
                "memory": "512Mi",
            },
        )
        reconcile.converge(request_id=made.pk, worker="e2e")
        namespace = Namespace.objects.get(name="payments-shop-dev", state=NamespaceState.ACTIVE)

        cached = cache_file(issuer, KUBECTL_CLIENT_ID, cache_home=tmp_path / "cache")
        cached.parent.mkdir(parents=True)
        cached.write_text(json.dumps({"id_token": kubectl_id_token(issuer, "sam")}))
        kubeconfig = tmp_path / "sam.kubeconfig"
        kubeconfig.write_text(use_it(sam, namespace, credentials=BERTH).text)
        environment = {
            **{k: v for k, v in os.environ.items() if not k.startswith("BERTH_")},
            "KUBECONFIG": str(kubeconfig),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "HOME": str(tmp_path),
            "BROWSER": "true",
        }

        def can_i(verb: str, resource: str) -> str:
            said = subprocess.run(
                [kubectl, "auth", "can-i", verb, resource, "-n", namespace.name],
                env=environment,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert "To sign in" not in said.stderr, said.stderr  # the cached ID token
            return said.stdout.strip()

        whoami = subprocess.run(
            [kubectl, "auth", "whoami", "-o", "json"],
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == "oidc:devidp-sam"
        assert can_i("create", "deployments") == "no"

        def granted(duration: str, reason: str) -> AccessGrant:
            grant = services.request_access(
                person=sam,
                namespace=namespace.name,
                role="member",
                duration=duration,
                reason=reason,
            )
            assert grant.request.state == RequestState.SUBMITTED  # an outsider: owners decide
            assert can_i("create", "deployments") == "no"
            services.approve_request(
                request_id=grant.request_id,
                approver=owner,
                plan_digest=review(grant.request).digest,
            )
            reconcile.converge(request_id=grant.request_id, worker="e2e")
            grant.refresh_from_db()
            assert grant.state == "active", grant.request.status_message
            return grant

        revoked = granted("1h", "one look")
        assert can_i("create", "deployments") == "yes"
        celery_app.conf.task_always_eager = True  # the worker, in this process
        try:
            services.revoke_grant(grant_id=revoked.pk, actor=sam)
        finally:
            celery_app.conf.task_always_eager = False
        eventually(lambda: can_i("create", "deployments") == "no", "revoked")
        assert AccessGrant.objects.get(pk=revoked.pk).state == "revoked"

        grant = granted("15m", "debug the search integration")
        assert can_i("create", "deployments") == "yes"
        assert can_i("create", "rolebindings") == "no"  # the tier's role, nothing more
        # The clock moves past the grant's end while the watcher runs (and stops before it
        # comes back): the watcher acts at the end, no job is run by hand.
        with time_machine.travel(timezone.now(), tick=True) as clock, watcher():
            synced(namespace.cluster)
            clock.move_to(grant.expires_at + timedelta(seconds=1))
            eventually(lambda: can_i("create", "deployments") == "no", "the grant's end")
            eventually(
                lambda: AuditEvent.objects.filter(
                    action="access.ended", after__grant=grant.pk
                ).exists(),
                "its end in the audit log",
            )
        assert can_i("create", "deployments") == "no"
