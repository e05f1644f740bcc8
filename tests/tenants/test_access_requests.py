"""Asking for access, decided like every request: the default rules (an elevated role needs
two platform admins, reading one's own tenant is approved at once, anything else is the
owning tenant's owners' call), nobody decides their own, bounds the tier sets, and who sees
an outsider's grant."""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import NamespaceState, RequestState, Role
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import (
    AccessGrant,
    AuditEvent,
    Cluster,
    EnvironmentTier,
    Membership,
    Namespace,
    Tenant,
    User,
)
from tenants.selectors import grants_visible_to, requests_visible_to, review
from tests.support.factories import UserFactory


def live(tenant: Tenant, name: str, tier: str) -> Namespace:
    return Namespace.objects.create(
        name=name,
        tenant=tenant,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )


def ask(person, namespace: Namespace, role: str, duration: str = "1h") -> AccessGrant:
    return services.request_access(
        person=person, namespace=namespace.name, role=role, duration=duration, reason="incident"
    )


def approve(grant: AccessGrant, approver):
    return services.approve_request(
        request_id=grant.request_id, approver=approver, plan_digest=review(grant.request).digest
    )


@pytest.fixture
def prod(demo_world) -> Namespace:
    return live(demo_world["tenant"], "payments-shop-prod", "prod")


@pytest.fixture
def dev(demo_world) -> Namespace:
    return live(demo_world["tenant"], "payments-shop-dev", "dev")


def test_prod_edit_needs_two_platform_admins_and_never_the_requester(demo_world, prod):
    asker = demo_world["admin"]  # a platform admin asks for it: still not their call
    grant = ask(asker, prod, "prod-edit")
    assert grant.request.policy_rule == "access-elevated-role-needs-two-platform-admins"
    with pytest.raises(NotAllowed, match="Nobody may decide their own request"):
        approve(grant, asker)
    first, second = (UserFactory(is_platform_admin=True) for _ in range(2))
    assert approve(grant, first).state == RequestState.SUBMITTED
    with pytest.raises(Exception, match="already approved"):
        approve(grant, first)
    with pytest.raises(NotAllowed):  # an owner of the tenant is not enough for prod-edit
        approve(grant, demo_world["owner"])
    assert approve(grant, second).state == RequestState.APPROVED
    grant.refresh_from_db()
    assert grant.cluster_role == "berth-tenant-edit" and grant.expires_at is not None


def test_a_member_reads_their_own_tenant_at_once(demo_world, dev):
    grant = ask(demo_world["developer"], dev, "viewer", "30m")
    assert grant.request.state == RequestState.APPROVED
    assert grant.subject == "oidc:devidp-dev"


def test_an_outsider_needs_the_owning_tenants_owner(demo_world, dev):
    grant = ask(demo_world["outsider"], dev, "member")
    assert grant.request.tenant == demo_world["tenant"]
    assert grant.request.policy_rule == "access-needs-tenant-owner"
    with pytest.raises(NotAllowed, match="Nobody may decide their own"):
        approve(grant, demo_world["outsider"])
    assert approve(grant, demo_world["owner"]).state == RequestState.APPROVED


def test_an_outsiders_grant_is_seen_by_the_owning_tenant_and_nobody_else_in_theirs(demo_world, dev):
    sam = demo_world["outsider"]
    colleague = UserFactory(username="sid")
    Membership.objects.create(
        user=colleague, tenant=Tenant.objects.get(slug="search"), role=Role.OWNER
    )
    grant = ask(sam, dev, "member")
    for who in (sam, demo_world["owner"], demo_world["developer"], demo_world["admin"]):
        assert grants_visible_to(who).filter(pk=grant.pk).exists(), who
        assert requests_visible_to(who).filter(pk=grant.request_id).exists(), who
    assert not grants_visible_to(colleague).filter(pk=grant.pk).exists()
    assert not requests_visible_to(colleague).filter(pk=grant.request_id).exists()


@pytest.mark.parametrize(
    ("role", "duration", "field", "said"),
    [
        ("admin", "1h", "role", "offers owner, member, viewer, prod-edit"),
        ("prod-edit", "5m", "duration", "from 15m to 4h"),
        ("prod-edit", "9h", "duration", "from 15m to 4h"),
        ("viewer", "90s", "duration", "whole minutes"),
        ("viewer", "soon", "duration", "not a duration"),
    ],
)
def test_what_the_tier_does_not_offer_is_refused_and_nothing_saved(
    demo_world, prod, role, duration, field, said
):
    with pytest.raises(InvalidInput) as refused:
        ask(demo_world["owner"], prod, role, duration)
    assert said in str(refused.value.field_errors[field])
    assert not AccessGrant.objects.exists()


def test_a_namespace_that_is_not_live_is_refused(demo_world):
    with pytest.raises(InvalidInput, match="not a live namespace"):
        services.request_access(
            person=demo_world["owner"],
            namespace="payments-nope",
            role="viewer",
            duration="1h",
            reason="look",
        )


def test_the_requests_form_and_api_send_access_to_its_own_door(demo_world, dev):
    with pytest.raises(InvalidInput, match="access-grants"):
        services.submit_request(
            tenant=demo_world["tenant"],
            kind="access",
            payload={"namespace": dev.name, "role": "viewer", "duration": "1h", "reason": "x"},
            requester=demo_world["developer"],
        )


def test_the_same_grant_asked_twice_is_refused(demo_world, dev):
    first = ask(demo_world["outsider"], dev, "member")
    with pytest.raises(InvalidInput, match=f"request #{first.request_id}"):
        ask(demo_world["outsider"], dev, "member")


def test_someone_in_no_tenant_may_not_ask(demo_world, dev):
    with pytest.raises(NotAllowed, match="Only members of a tenant"):
        ask(UserFactory(oidc_subject="nobody"), dev, "viewer")


def test_someone_the_clusters_cannot_name_is_told_to_sign_in(demo_world, dev):
    person = UserFactory(oidc_subject=None)
    Membership.objects.create(user=person, tenant=demo_world["tenant"], role=Role.MEMBER)
    with pytest.raises(NotAllowed, match="sign in to Berth once"):
        ask(person, dev, "viewer")


def ready(grant: AccessGrant) -> AccessGrant:
    """As the engine leaves an approved grant once its binding is on the cluster."""
    run = services.start_provisioning(request_id=grant.request_id, plan_digest="applied")
    services.mark_ready(run=run)
    grant.refresh_from_db()
    assert grant.state == "active"
    return grant


def test_a_grant_ends_when_its_tier_stops_offering_its_role(
    demo_world, prod, django_capture_on_commit_callbacks
):
    grant = ask(demo_world["owner"], prod, "prod-edit")
    for admin in (UserFactory(is_platform_admin=True) for _ in range(2)):
        approve(grant, admin)
    grant = ready(grant)
    assert services.end_unentitled_grants() == []  # nothing ended: it may go on
    EnvironmentTier.objects.filter(slug="prod").update(elevated_role="", elevated_cluster_role="")
    with django_capture_on_commit_callbacks() as told:
        assert services.end_unentitled_grants(tier=prod.tier) == [grant]
    grant.refresh_from_db()
    assert grant.state == "revoked" and grant.revoked_by is None
    event = AuditEvent.objects.get(action="access.revoked")
    assert event.after["reason"] == "the prod tier no longer offers berth-tenant-edit for prod-edit"
    assert told  # the engine is told once it commits, and removes the binding


def test_a_deactivated_persons_grants_end(demo_world, dev):
    grant = ready(approve_and_get(ask(demo_world["outsider"], dev, "member"), demo_world["owner"]))
    User.objects.filter(pk=demo_world["outsider"].pk).update(is_active=False)
    assert [g.pk for g in services.end_unentitled_grants()] == [grant.pk]
    grant.refresh_from_db()
    assert grant.state == "revoked"
    assert "was deactivated" in AuditEvent.objects.get(action="access.revoked").after["reason"]


def approve_and_get(grant: AccessGrant, approver) -> AccessGrant:
    approve(grant, approver)
    grant.refresh_from_db()
    return grant


def test_narrowing_a_tiers_role_in_the_admin_site_ends_its_grants_at_once(demo_world, dev, client):
    from tests.support.deploy_tokens import save_tier_in_admin

    grant = ready(approve_and_get(ask(demo_world["outsider"], dev, "member"), demo_world["owner"]))
    assert grant.cluster_role == "berth-tenant-edit"
    client.force_login(User.objects.filter(is_superuser=True).first() or superuser())
    saved = save_tier_in_admin(client, dev.tier, member_cluster_role="berth-tenant-view")
    assert saved.status_code == 302, saved.content[:2000]
    grant.refresh_from_db()
    assert grant.state == "revoked"


def superuser() -> User:
    return UserFactory(is_superuser=True, is_staff=True)
