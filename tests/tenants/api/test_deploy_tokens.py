"""Deploy tokens over the API, where they are refused: POST
/api/v1/namespaces/<name>/deploy-tokens/ mints one only for an owner or member of the
namespace's tenant, in a tier that allows them, unless an approval rule denies it; for a
lifetime of 10 to 60 minutes. Each refusal leaves nothing behind; a rule's is audited. (The
mints themselves, against the cluster stand-in: tests/provisioning/jobs/test_deploy_tokens.py.)
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from tenants.choices import NamespaceState, PolicyOutcome
from tenants.models import (
    ApprovalRule,
    AuditEvent,
    Cluster,
    DeployToken,
    EnvironmentTier,
    Namespace,
)
from tests.support.api import api, assert_problem

pytestmark = pytest.mark.django_db


def live_namespace(api_world, tier: str, name: str) -> Namespace:
    return Namespace.objects.create(
        name=name,
        tenant=api_world.payments,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )


def mint(user, namespace: str, **body):
    return api(user).post(f"/api/v1/namespaces/{namespace}/deploy-tokens/", body, format="json")


@pytest.fixture
def dev(api_world) -> Namespace:
    return live_namespace(api_world, "dev", "payments-shop-dev")


def test_a_viewer_may_not_mint_one(api_world, dev):
    assert_problem(mint(api_world.viewer, dev.name), 403)
    assert not DeployToken.objects.exists()


def test_someone_of_another_tenant_does_not_learn_the_namespace_exists(api_world, dev):
    assert_problem(mint(api_world.outsider, dev.name), 404)


def test_a_platform_admin_outside_the_tenant_may_not_mint_one(api_world, dev):
    body = assert_problem(mint(api_world.admin, dev.name), 403)
    assert "owners and members of payments" in body["detail"]


def test_a_prod_namespace_refuses_them(api_world):
    prod = live_namespace(api_world, "prod", "payments-shop-prod")
    body = assert_problem(mint(api_world.owner, prod.name), 403)
    assert "Tier prod does not allow deploy tokens" in body["detail"]
    assert not DeployToken.objects.exists()


@pytest.mark.parametrize("ttl", [5, 61, "an hour"])
def test_a_lifetime_beyond_ten_to_sixty_minutes_is_refused_by_field(api_world, dev, ttl):
    body = assert_problem(mint(api_world.member, dev.name, ttl_minutes=ttl), 400)
    assert "ttl_minutes" in body["errors"]
    assert not DeployToken.objects.exists()


def test_a_rule_that_denies_them_refuses_and_is_audited(api_world, dev):
    ApprovalRule.objects.create(
        position=0,
        name="no-tokens-for-payments",
        condition='request.kind == "deploy_token" && request.tenant == "payments"',
        outcome=PolicyOutcome.DENY,
        message="payments deploys through Argo CD only",
    )
    body = assert_problem(mint(api_world.member, dev.name), 403)
    assert "payments deploys through Argo CD only" in body["detail"]
    assert not DeployToken.objects.exists()
    event = AuditEvent.objects.get(action="deploy_token.refuse")
    assert event.actor == api_world.member and event.after["rule"] == "no-tokens-for-payments"


def test_a_rule_asking_for_approval_does_not_refuse_but_an_unreachable_cluster_does(api_world, dev):
    """The demo's staging rule asks a tenant owner to approve; a token is not a request, so
    the tier decides. The demo's cluster cannot be reached: the answer says so, and the
    record is left revoked, so that beat removes whatever the cluster may have made."""
    ApprovalRule.objects.create(
        position=0,
        name="everything-needs-an-owner",
        condition="true",
        outcome=PolicyOutcome.REQUIRE,
    )
    body = assert_problem(mint(api_world.member, dev.name), 409)
    assert "Cluster sandbox refused the deploy token" in body["detail"]
    assert not DeployToken.objects.live().exists()
    assert list(DeployToken.objects.to_remove().values_list("namespace__name", flat=True)) == [
        dev.name
    ]
    assert not AuditEvent.objects.filter(action__startswith="deploy_token.").exists()


def test_the_list_shows_who_minted_what_and_never_a_token(api_world, dev):
    DeployToken.objects.create(
        namespace=dev,
        minted_by=api_world.member,
        service_account="berth-deploy-00000000aa",
        cluster_role="berth-tenant-edit",
        audience="",
        purpose="shop PR 42",
        expires_at=timezone.now() + timezone.timedelta(minutes=30),
    )
    answer = api(api_world.viewer, scopes=["read", "request"]).get(
        f"/api/v1/namespaces/{dev.name}/deploy-tokens/"
    )
    assert answer.status_code == 200, answer.content
    (row,) = answer.json()
    assert row["minted_by"] == "dev" and row["purpose"] == "shop PR 42"
    assert row["state"] == "live" and "token" not in row
