"""Deploy tokens against the TLS stand-in, shared by the tests of minting and using them
(tests/provisioning/jobs/test_deploy_tokens.py) and of their ending with the right to them
(tests/security/test_credentials_end.py): the stand-in over TLS, payments-shop-dev provisioned
with the guardrails and tenant roles, and how a token is tried and its end read."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import requests
from django.urls import reverse

from kubesandbox import KubeSandbox
from provisioning import tasks
from tenants.choices import GuardrailsMode, NamespaceState
from tenants.models import AuditEvent, DeployToken, Namespace
from tests.support.authz import ca_file_of
from tests.support.cluster import ca_of, shared_stand_in
from tests.support.gitops_loop import approved_namespace, built_on_the_loop, work


def tls_stand_in() -> KubeSandbox:
    """Over TLS, and nobody is anyone without a token: kubectl sends a bearer token only
    over https, and a token that stopped working must not fall back to an anonymous admin.
    One per test process, a fresh cluster for each test."""
    return shared_stand_in(termination_seconds=0.05, tls=True, anonymous_user=None)


def provisioned_shop(gitops_world, sandbox) -> Namespace:
    """payments-shop-dev, provisioned on a cluster with Berth's guardrails and tenant roles
    (what the tiers bind to members) installed; built once per test process."""

    def build() -> None:
        cluster = gitops_world["cluster"]
        cluster.guardrails = GuardrailsMode.BERTH
        cluster.ca_certificate = ca_of(sandbox)
        cluster.save(update_fields=["guardrails", "ca_certificate"])
        assert not tasks.install_guardrails(cluster.pk).startswith("failed")
        approved_namespace(gitops_world, "shop", "dev")
        work()

    built_on_the_loop(gitops_world, sandbox, "provisioned-shop", build)
    return Namespace.objects.get(name="payments-shop-dev", state=NamespaceState.ACTIVE)


def as_token(sandbox, token: str, path: str) -> requests.Response:
    return requests.get(
        f"{sandbox.url}{path}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
        verify=ca_file_of(sandbox),
    )


def save_tier_in_admin(admin_client, tier, **changed):
    """The tier's admin change form posted as it is filled in, with `changed` fields."""
    form = {
        field.name: getattr(tier, field.attname)
        for field in tier._meta.concrete_fields
        if field.editable and field.name not in ("id", "default_ttl", "max_ttl")
    }
    form = {k: ("" if v is None else v) for k, v in {**form, **changed}.items()}
    return admin_client.post(
        reverse("admin:tenants_environmenttier_change", args=[tier.pk]),
        {k: v for k, v in form.items() if v is not False and v != ""},
    )


def kubectl_with(sandbox, token: str, namespace: Namespace) -> subprocess.CompletedProcess:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the token was checked over HTTP only")
    flags = [f"--server={sandbox.url}", f"--certificate-authority={ca_file_of(sandbox)}"]
    flags += [f"--token={token}", "--kubeconfig=/dev/null"]
    command = [kubectl, *flags, "get", "pods", "-n", namespace.name]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def pods_as(sandbox, token: str, namespace: Namespace) -> int:
    return as_token(sandbox, token, f"/api/v1/namespaces/{namespace.name}/pods").status_code


def ended_reason(token: DeployToken) -> str:
    event = AuditEvent.objects.get(action="deploy_token.revoke", object_id=str(token.pk))
    assert event.actor is None  # Berth did it, not a person
    return event.after["reason"]
