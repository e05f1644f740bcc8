"""A deploy token ends with the right to it: when its minter leaves the tenant (their next
sign-in's group sync), is deactivated, or the namespace leaves active (beat, every minute),
and when the tier's member role narrows or the tier stops allowing tokens (the admin's save).
Each ending is audited with its reason and the minter told; the token then answers
Unauthorized against the TLS stand-in, kubectl included."""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import NamespaceState
from tenants.errors import NotAllowed
from tenants.models import Namespace, User
from tests.support.deploy_tokens import (
    as_token,
    ended_reason,
    kubectl_with,
    provisioned_shop,
    save_tier_in_admin,
    tls_stand_in,
)


@pytest.fixture
def sandbox():
    return tls_stand_in()


@pytest.fixture
def namespace(gitops_world, sandbox) -> Namespace:
    return provisioned_shop(gitops_world, sandbox)


@pytest.fixture
def member() -> User:
    return User.objects.get(username="dev")


def test_a_tier_no_longer_allowing_them_ends_its_live_tokens_at_once(
    gitops_world, sandbox, namespace, member, admin_client
):
    """The platform admin unticks the tier's setting in the admin: no pipeline deploys there
    any more, not in an hour."""
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=60)
    tier = namespace.tier
    answer = save_tier_in_admin(admin_client, tier, deploy_tokens_allowed="")  # unticked
    assert answer.status_code == 302, answer.content.decode()[:2000]
    token.refresh_from_db()
    assert token.state == "revoked" and token.removed_at is not None
    path = f"/api/v1/namespaces/{namespace.name}/pods"
    assert as_token(sandbox, issued.token, path).status_code == 401
    with pytest.raises(NotAllowed, match="does not allow deploy tokens"):
        services.mint_deploy_token(
            user=member, namespace=Namespace.objects.get(pk=namespace.pk), ttl_minutes=10
        )


@pytest.mark.processes  # kubectl
def test_a_minter_who_leaves_the_tenant_ends_their_token_at_sign_in(
    gitops_world,
    sandbox,
    namespace,
    member,
    settings,
    mailoutbox,
    eager_tasks,
    django_capture_on_commit_callbacks,
):
    """The identity provider stops sending payments-devs: at dev's next sign-in the token
    they minted is revoked, kubectl is refused, and dev is told why."""
    from portal.auth.identity import sign_in

    settings.OIDC_GROUPS_CLAIM = "groups"
    User.objects.filter(pk=member.pk).update(email="dev@example.com")
    member.refresh_from_db()
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=60)
    assert kubectl_with(sandbox, issued.token, namespace).returncode == 0

    with django_capture_on_commit_callbacks(execute=True):
        sign_in(
            claims={
                "sub": member.oidc_subject,
                "preferred_username": "dev",
                "email": "dev@example.com",
                "groups": [],
            },
        )

    token.refresh_from_db()
    assert token.state == "revoked" and token.removed_at is not None
    refused = kubectl_with(sandbox, issued.token, namespace)
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr
    assert "dev may no longer mint it: Only the owners and members of payments" in (
        ended_reason(token)
    )
    [mail] = [m for m in mailoutbox if "deploy token" in m.subject]
    assert mail.to == [member.email] and "payments-shop-dev" in mail.subject


def test_a_tier_whose_member_role_is_narrowed_ends_tokens_bound_to_the_wider_one(
    gitops_world, sandbox, namespace, member, admin_client
):
    """edit → view for the tier's members: a token bound to edit could still create
    Deployments, so it ends at once."""
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=60)
    tier = namespace.tier

    answer = save_tier_in_admin(admin_client, tier, member_cluster_role="berth-tenant-view")

    assert answer.status_code == 302, answer.content.decode()[:2000]
    token.refresh_from_db()
    assert token.state == "revoked"
    assert (
        as_token(sandbox, issued.token, f"/api/v1/namespaces/{namespace.name}/pods").status_code
        == 401
    )
    assert "members now have berth-tenant-view, not the berth-tenant-edit" in ended_reason(token)


@pytest.mark.parametrize("ends", ["minter-deactivated", "namespace-decommissioning"])
def test_beat_ends_a_token_whose_right_ended_elsewhere(
    gitops_world, sandbox, namespace, member, ends
):
    """Rights that end outside a sign-in or a tier's change (a person deactivated in the
    admin, a namespace leaving active) end the token at beat's next run (every minute)."""
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=60)
    if ends == "minter-deactivated":
        User.objects.filter(pk=member.pk).update(is_active=False)
    else:
        Namespace.objects.filter(pk=namespace.pk).update(state=NamespaceState.DECOMMISSIONING)

    assert services.remove_spent_deploy_tokens() == {"ended": 1, "removed": 0, "failed": 0}

    token.refresh_from_db()
    assert token.state == "revoked" and token.removed_at is not None
    assert (
        as_token(sandbox, issued.token, f"/api/v1/namespaces/{namespace.name}/pods").status_code
        == 401
    )
    assert {"minter-deactivated": "dev was deactivated", "namespace-decommissioning": "not active"}[
        ends
    ] in ended_reason(token)


def test_a_token_whose_right_holds_is_left_alone_by_beat(gitops_world, sandbox, namespace, member):
    token, issued = services.mint_deploy_token(user=member, namespace=namespace, ttl_minutes=60)

    assert services.remove_spent_deploy_tokens() == {"ended": 0, "removed": 0, "failed": 0}

    token.refresh_from_db()
    assert token.state == "live"
    assert (
        as_token(sandbox, issued.token, f"/api/v1/namespaces/{namespace.name}/pods").status_code
        == 200
    )
