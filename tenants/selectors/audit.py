"""The audit log a person may read."""

from __future__ import annotations

from django.db.models import QuerySet

from tenants.choices import Role
from tenants.models import AuditEvent, Membership, User
from tenants.selectors.rights import is_platform_admin


def audit_events_visible_to(user: User) -> QuerySet[AuditEvent]:
    """Platform admins see everything; tenant owners see their tenants' events."""
    events = AuditEvent.objects.select_related("tenant")
    if is_platform_admin(user):
        return events
    owned = Membership.objects.filter(user=user, role=Role.OWNER).values("tenant_id")
    return events.filter(tenant_id__in=owned)


def may_see_audit(user: User) -> bool:
    return is_platform_admin(user) or user.memberships.filter(role=Role.OWNER).exists()
