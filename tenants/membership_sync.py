"""Memberships follow the identity provider's groups, synced at every sign-in.

Each tenant lists the OIDC groups of its owners, members and viewers. When someone signs
in, `sync_memberships` makes their memberships match the groups in their claims: it adds
the ones the groups now grant, changes roles that moved, and removes the ones no group
grants any more, so someone dropped from a group loses that tenant at the next sign-in.
Memberships a platform admin set by hand (source MANUAL) are never touched. The platform
admin flag follows the platform-admin groups the same way. Every change is an audit event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction

from tenants import audit
from tenants.choices import MembershipSource, Role
from tenants.models import Membership, Tenant, User

ROLE_ORDER = (Role.OWNER, Role.MEMBER, Role.VIEWER)  # strongest first


def memberships_from_groups(tenants: Iterable[Tenant], groups: Iterable[str]) -> dict[Tenant, str]:
    """The strongest role each tenant grants to someone in these groups."""
    held = set(groups)
    granted: dict[Tenant, str] = {}
    for tenant in tenants:
        for role in ROLE_ORDER:
            if set(tenant.groups_for(role)) & held:
                granted[tenant] = role
                break
    return granted


@dataclass(frozen=True)
class MembershipChange:
    tenant: str
    before: str | None  # role before the sync; None when the membership is new
    after: str | None  # role after the sync; None when it was removed


@dataclass
class SyncResult:
    changes: list[MembershipChange] = field(default_factory=list)
    platform_admin_changed: bool = False


def sync_memberships(
    *,
    user: User,
    groups: Iterable[str],
    platform_admin_groups: Iterable[str] = (),
    source_ip: str | None = None,
) -> SyncResult:
    """Make the user's group-derived memberships and platform-admin flag match `groups`.

    Runs in one transaction holding a lock on the user's row, so two sign-ins of the same
    person cannot interleave.
    """
    held = {group for group in groups if group}
    result = SyncResult()
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)

        is_admin = bool(held & set(platform_admin_groups))
        if locked.is_platform_admin != is_admin:
            audit.record(
                actor=locked,
                action="user.platform_admin.grant" if is_admin else "user.platform_admin.revoke",
                obj=locked,
                before={"is_platform_admin": locked.is_platform_admin},
                after={"is_platform_admin": is_admin, "source": MembershipSource.OIDC},
                source_ip=source_ip,
            )
            locked.is_platform_admin = is_admin
            locked.save(update_fields=["is_platform_admin"])
            result.platform_admin_changed = True
        user.is_platform_admin = is_admin
        # Approval rules (request.requester_groups) and the access map read them.
        if locked.last_groups != sorted(held):
            locked.last_groups = sorted(held)
            locked.save(update_fields=["last_groups"])
        user.last_groups = locked.last_groups

        tenants = Tenant.objects.only(
            "id", "slug", "owner_groups", "member_groups", "viewer_groups"
        )
        wanted = {
            tenant.pk: (tenant, role)
            for tenant, role in memberships_from_groups(tenants, held).items()
        }
        existing = {
            membership.tenant_id: membership
            for membership in Membership.objects.filter(user=locked).select_related("tenant")
        }

        for tenant_id, membership in existing.items():
            if membership.source == MembershipSource.MANUAL:
                wanted.pop(tenant_id, None)  # set by a platform admin: not ours to change
                continue
            if tenant_id not in wanted:
                _record(
                    locked, membership, "membership.remove", membership.role, None, held, source_ip
                )
                membership.delete()
                result.changes.append(
                    MembershipChange(membership.tenant.slug, membership.role, None)
                )
            elif wanted[tenant_id][1] != membership.role:
                before, membership.role = membership.role, wanted[tenant_id][1]
                membership.save(update_fields=["role"])
                _record(
                    locked,
                    membership,
                    "membership.change",
                    before,
                    membership.role,
                    held,
                    source_ip,
                )
                result.changes.append(
                    MembershipChange(membership.tenant.slug, before, membership.role)
                )

        for tenant_id, (tenant, role) in wanted.items():
            if tenant_id in existing:
                continue
            membership = Membership.objects.create(
                user=locked, tenant=tenant, role=role, source=MembershipSource.OIDC
            )
            _record(locked, membership, "membership.add", None, role, held, source_ip)
            result.changes.append(MembershipChange(tenant.slug, None, role))
    return result


def _record(
    user: User,
    membership: Membership,
    action: str,
    before: str | None,
    after: str | None,
    held: set[str],
    source_ip: str | None,
) -> None:
    tenant = membership.tenant
    # The groups that granted the new role, so the audit log says why, not only what.
    granted_by = sorted(set(tenant.groups_for(after)) & held) if after else []
    audit.record(
        actor=user,
        action=action,
        obj=membership,
        tenant_id=tenant.pk,
        before={"role": before, "source": MembershipSource.OIDC} if before else None,
        after={"role": after, "source": MembershipSource.OIDC, "groups": granted_by}
        if after
        else None,
        source_ip=source_ip,
    )
