"""Deploy tokens on the cluster: a member mints one for a provisioned namespace; the token the
stand-in issued does what the tier's members may do there and nothing more; revoking it, or
its expiry, removes its ServiceAccount and the token stops working; and the periodic jobs
(drift, the truth table) never take its objects for Berth's own. How a token ends with the
right to it: tests/security/test_credentials_end.py."""

from __future__ import annotations

import html
import shutil
import subprocess
from datetime import timedelta

import pytest
import time_machine
import yaml
from django.urls import reverse
from django.utils import timezone

from provisioning.jobs import sweep_namespace
from tenants import provisioner, services
from tenants.choices import NamespaceState
from tenants.errors import NotAllowed
from tenants.models import AuditEvent, DeployToken, Namespace, User
from tests.support.authz import LiveCluster, Subject
from tests.support.deploy_tokens import as_token, provisioned_shop, tls_stand_in
from tests.support.gitops_loop import approved_namespace, submit, work
from tests.support.workflow import approve_if_needed

# (verb, group, resource): what a pipeline might try, in its namespace and next door.
TRIED = [
    ("list", "", "pods"),
    ("create", "apps", "deployments"),
    ("delete", "", "secrets"),
    ("create", "rbac.authorization.k8s.io", "rolebindings"),
    ("patch", "", "resourcequotas"),
    ("create", "", "serviceaccounts/token"),
    ("delete", "", "namespaces"),
]


@pytest.fixture
def sandbox():
    return tls_stand_in()


@pytest.fixture
def namespace(gitops_world, sandbox) -> Namespace:
    return provisioned_shop(gitops_world, sandbox)


@pytest.fixture
def member() -> User:
    return User.objects.get(username="dev")


def test_the_token_can_do_what_a_member_can_there_and_nothing_more(
    gitops_world, sandbox, namespace, member
):
    token, issued = services.mint_deploy_token(
        user=member, namespace=namespace, ttl_minutes=30, purpose="shop PR 42"
    )
    assert token.cluster_role == namespace.tier.member_cluster_role
    assert as_token(sandbox, issued.token, f"/api/v1/namespaces/{namespace.name}/pods").ok
    assert as_token(sandbox, issued.token, "/api/v1/namespaces/kube-system/pods").status_code == 403

    live = LiveCluster.over(sandbox)
    robot = Subject.user(
        f"system:serviceaccount:{namespace.name}:{token.service_account}",
        "system:serviceaccounts",
        f"system:serviceaccounts:{namespace.name}",
        "system:authenticated",
    )
    a_member = Subject.user("someone-of-payments-devs", "payments-devs", "system:authenticated")
    for where in (namespace.name, "payments-gitops", "kube-system", "default"):
        for verb, group, resource in TRIED:
            assert live.can_i(robot, verb, group, resource, where) == (
                live.can_i(a_member, verb, group, resource, where) and where == namespace.name
            ), (verb, group, resource, where)


def test_a_mint_is_audited_and_the_token_never_stored(gitops_world, sandbox, namespace, member):
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=10)
    event = AuditEvent.objects.get(action="deploy_token.mint", object_id=str(token.pk))
    assert event.actor == member and event.after["namespace"] == namespace.name
    assert issued.token not in str(event.after)
    stored = DeployToken.objects.filter(pk=token.pk).values()[0]
    assert issued.token not in str(stored)
    # The cluster's expiry, ten minutes out, is the record's.
    assert abs(token.expires_at - (timezone.now() + timedelta(minutes=10))) < timedelta(minutes=1)
    # Whom the token is for, as the API server set it (its own audience, none being asked).
    assert token.audience == "https://kubernetes.default.svc.cluster.local"


def test_revoking_ends_the_token_at_once(gitops_world, sandbox, namespace, member):
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=30)
    path = f"/api/v1/namespaces/{namespace.name}/pods"
    assert as_token(sandbox, issued.token, path).ok
    services.revoke_deploy_token(user=gitops_world["owner"], token=token)
    assert as_token(sandbox, issued.token, path).status_code == 401
    assert sandbox.get("ServiceAccount", token.service_account, namespace.name) is None
    assert sandbox.get("RoleBinding", token.service_account, namespace.name) is None
    token.refresh_from_db()
    assert token.state == "revoked" and token.removed_at is not None
    assert AuditEvent.objects.filter(
        action="deploy_token.revoke", actor=gitops_world["owner"]
    ).exists()


def test_an_expired_token_stops_and_beat_removes_its_service_account(
    gitops_world, sandbox, namespace, member
):
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=10)
    path = f"/api/v1/namespaces/{namespace.name}/pods"
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert as_token(sandbox, issued.token, path).status_code == 401
        assert services.remove_spent_deploy_tokens() == {"ended": 0, "removed": 1, "failed": 0}
        token.refresh_from_db()
        assert token.state == "expired" and token.removed_at is not None
        assert services.remove_spent_deploy_tokens() == {"ended": 0, "removed": 0, "failed": 0}
    assert sandbox.get("ServiceAccount", token.service_account, namespace.name) is None


def test_drift_and_the_truth_table_leave_a_deploy_tokens_objects_alone(
    gitops_world, sandbox, namespace, member
):
    token, _ = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=30)
    assert sweep_namespace(namespace) == []
    table = provisioner.take_truth(gitops_world["tenant"])
    assert not [row for row in table["rows"] if token.service_account in str(row)]
    assert sandbox.get("ServiceAccount", token.service_account, namespace.name) is not None


def test_prod_refuses_deploy_tokens_and_nothing_is_made(gitops_world, sandbox, namespace, member):
    approved_namespace(gitops_world, "shop", "prod")
    work()
    prod = Namespace.objects.get(name="payments-shop-prod", state=NamespaceState.ACTIVE)
    with pytest.raises(NotAllowed, match="Tier prod does not allow deploy tokens"):
        services.mint_deploy_token(user=gitops_world["owner"], namespace=prod, ttl_minutes=30)
    assert not DeployToken.objects.exists()
    accounts = [a["metadata"]["name"] for a in sandbox.objects("ServiceAccount", prod.name)]
    assert accounts and not [name for name in accounts if name.startswith("berth-deploy-")]


def test_a_decommissioned_namespace_took_its_tokens_with_it(
    gitops_world, sandbox, namespace, member
):
    token, _ = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=30)
    approve_if_needed(
        submit(gitops_world, "decommission", namespace=namespace.name, reason="done"),
        approver=gitops_world["admin"],
    )
    work()
    namespace.refresh_from_db()
    assert namespace.state == NamespaceState.DECOMMISSIONED
    services.revoke_deploy_token(user=member, token=token)
    token.refresh_from_db()
    assert token.removed_at is not None


@pytest.mark.processes  # kubectl
def test_minted_on_the_namespace_page_kubectl_deploys_with_it(
    gitops_world, sandbox, namespace, member, client, tmp_path
):
    """What a member does: the page's form, the kubeconfig shown once, kubectl with it."""
    client.force_login(member)
    page = client.get(reverse("namespace-detail", args=[namespace.pk]))
    assert b"Mint a deploy token" in page.content
    minted = client.post(
        reverse("deploy-token-mint", args=[namespace.pk]),
        {"ttl_minutes": "15", "purpose": "shop PR 42"},
    )
    assert minted.status_code == 200 and minted["Cache-Control"] == "no-store"
    text = html.unescape(minted.content.decode())
    config = yaml.safe_load(
        text.split('data-testid="deploy-kubeconfig"><code>')[1].split("</code>")[0]
    )
    assert config["contexts"][0]["context"]["namespace"] == namespace.name
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the kubeconfig was checked, not used")
    path = tmp_path / "deploy.kubeconfig"
    path.write_text(yaml.safe_dump(config))

    def kubectl_says(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [kubectl, "--kubeconfig", str(path), *args], capture_output=True, text=True, timeout=60
        )

    assert kubectl_says("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
    assert kubectl_says("auth", "can-i", "create", "rolebindings").stdout.strip() == "no"
    assert kubectl_says("get", "pods", "-n", "kube-system").returncode != 0
    listed = client.get(reverse("namespace-detail", args=[namespace.pk]))
    assert b"shop PR 42" in listed.content and b"Revoke" in listed.content


def test_another_tenants_member_cannot_see_the_page_its_owner_may_mint(
    gitops_world, sandbox, namespace, client
):
    client.force_login(User.objects.get(username="sam"))  # of search: cannot see it at all
    assert client.get(reverse("namespace-detail", args=[namespace.pk])).status_code == 404
    client.force_login(gitops_world["owner"])
    page = client.get(reverse("namespace-detail", args=[namespace.pk]))
    assert b"Mint a deploy token" in page.content
