"""Memberships follow the identity provider's groups at every sign-in (tenants.membership_sync)."""

import pytest

from tenants.choices import MembershipSource, Role
from tenants.membership_sync import memberships_from_groups, sync_memberships
from tenants.models import AuditEvent, Membership
from tests.support.factories import MembershipFactory, TenantFactory, UserFactory

ADMINS = ["platform-admins"]


@pytest.fixture
def payments(db):
    return TenantFactory(
        slug="payments",
        owner_groups=["payments-owners"],
        member_groups=["payments-devs"],
        viewer_groups=["payments-auditors"],
    )


@pytest.fixture
def search(db):
    return TenantFactory(
        slug="search", owner_groups=["search-owners"], member_groups=["search-devs"]
    )


@pytest.fixture
def dana(db):
    return UserFactory(username="dana")


def roles(user):
    return dict(Membership.objects.filter(user=user).values_list("tenant__slug", "role"))


def sync(user, *groups, source_ip="192.0.2.10"):
    return sync_memberships(
        user=user, groups=groups, platform_admin_groups=ADMINS, source_ip=source_ip
    )


def test_groups_add_memberships_with_the_role_each_tenant_gives(dana, payments, search):
    sync(dana, "payments-devs", "search-owners", "unrelated-group")

    assert roles(dana) == {"payments": Role.MEMBER, "search": Role.OWNER}
    assert set(Membership.objects.values_list("source", flat=True)) == {MembershipSource.OIDC}


def test_the_strongest_role_wins_when_several_groups_grant_one(payments):
    granted = memberships_from_groups([payments], ["payments-auditors", "payments-owners"])
    assert granted == {payments: Role.OWNER}


def test_a_group_that_moved_changes_the_role(dana, payments):
    sync(dana, "payments-devs")
    sync(dana, "payments-auditors")

    assert roles(dana) == {"payments": Role.VIEWER}
    change = AuditEvent.objects.get(action="membership.change")
    assert change.before["role"] == Role.MEMBER
    assert change.after["role"] == Role.VIEWER


def test_a_dropped_group_removes_the_membership(dana, payments, search):
    sync(dana, "payments-devs", "search-devs")
    sync(dana, "search-devs")

    assert roles(dana) == {"search": Role.MEMBER}
    removal = AuditEvent.objects.get(action="membership.remove")
    assert removal.before["role"] == Role.MEMBER
    assert removal.after is None
    assert removal.tenant == payments


def test_a_manual_membership_is_left_alone_by_the_sync(dana, payments, search):
    MembershipFactory(user=dana, tenant=payments, role=Role.VIEWER, source=MembershipSource.MANUAL)

    sync(dana, "payments-owners")  # would grant owner, but a platform admin set this one
    sync(dana)  # and no group grants it at all

    membership = Membership.objects.get(user=dana, tenant=payments)
    assert (membership.role, membership.source) == (Role.VIEWER, MembershipSource.MANUAL)
    assert not AuditEvent.objects.filter(action__startswith="membership.").exists()


def test_each_change_is_audited_with_roles_groups_and_source_ip(dana, payments):
    sync(dana, "payments-devs", source_ip="198.51.100.7")

    event = AuditEvent.objects.get(action="membership.add")
    assert event.actor == dana
    assert event.tenant == payments
    assert event.before is None
    assert event.after == {"role": Role.MEMBER, "source": "oidc", "groups": ["payments-devs"]}
    assert event.source_ip == "198.51.100.7"
    assert event.object_type == "tenants.membership"


def test_signing_in_again_with_the_same_groups_changes_nothing(dana, payments):
    sync(dana, "payments-devs")
    events = AuditEvent.objects.count()

    result = sync(dana, "payments-devs")

    assert result.changes == []
    assert AuditEvent.objects.count() == events


def test_platform_admin_flag_follows_the_admin_groups_and_is_audited(dana):
    sync(dana, "platform-admins")
    dana.refresh_from_db()
    assert dana.is_platform_admin

    sync(dana, "payments-devs")
    dana.refresh_from_db()
    assert not dana.is_platform_admin

    actions = list(
        AuditEvent.objects.filter(action__startswith="user.platform_admin")
        .order_by("id")
        .values_list("action", "before", "after")
    )
    assert [
        (action, before["is_platform_admin"], after["is_platform_admin"])
        for action, before, after in actions
    ] == [
        ("user.platform_admin.grant", False, True),
        ("user.platform_admin.revoke", True, False),
    ]


def test_platform_admin_flag_is_not_audited_when_it_stays_the_same(dana):
    sync(dana, "platform-admins")
    sync(dana, "platform-admins")
    assert AuditEvent.objects.filter(action__startswith="user.platform_admin").count() == 1


def test_the_groups_of_the_last_sign_in_are_kept_for_rules_to_read(dana, payments):
    from tenants.policy import attributes_for

    sync(dana, "payments-devs", "on-call")
    dana.refresh_from_db()
    assert dana.last_groups == ["on-call", "payments-devs"]
    attributes = attributes_for(
        tenant=payments,
        kind="namespace",
        requester=dana,
        payload={
            "app": "shop",
            "tier": "dev",
            "cluster": "sandbox",
            "cpu_millis": 500,
            "memory_mib": 512,
        },
    )
    assert attributes["requester_groups"] == ["on-call", "payments-devs"]

    sync(dana, "payments-devs")
    dana.refresh_from_db()
    assert dana.last_groups == ["payments-devs"]
