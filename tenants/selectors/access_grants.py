"""Access grants a person may see: their own, those on their tenants' namespaces (the owning
tenant decides them and sees who holds what there), every one for platform admins. A grant
someone asked of another tenant is never shown to the rest of the asker's own tenant."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from tenants.models import AccessGrant, Membership, Namespace, User
from tenants.selectors.rights import is_platform_admin

STATES = ("pending", "granting", "active", "expired", "revoked", "refused", "failed")


def grants_visible_to(user: User) -> QuerySet[AccessGrant]:
    grants = AccessGrant.objects.select_related(
        "request", "person", "revoked_by", "namespace__tenant", "namespace__cluster"
    )
    if is_platform_admin(user):
        return grants
    mine = Membership.objects.filter(user=user).values("tenant_id")
    return grants.filter(Q(person=user) | Q(namespace__tenant_id__in=mine))


def visible_grant(user: User, pk: int) -> AccessGrant:
    """One grant, or 404: never a hint that one outside what `user` sees exists."""
    return get_object_or_404(grants_visible_to(user), pk=pk)


def live_grants_in(namespace: Namespace) -> list[AccessGrant]:
    """Who holds a role on the namespace by a grant now, soonest to end first."""
    return list(
        AccessGrant.objects.live()
        .filter(namespace=namespace)
        .select_related("person", "request")
        .order_by("expires_at", "pk")
    )


def live_grant_of(user: User, namespace: Namespace) -> AccessGrant | None:
    """The person's live grant on the namespace that lasts longest, if any."""
    return (
        AccessGrant.objects.live()
        .filter(namespace=namespace, person=user)
        .order_by("-expires_at")
        .first()
    )


def namespaces_granted_to(user: User) -> QuerySet[Namespace]:
    """Namespaces the person holds a live grant on (their "Use it" works there)."""
    return Namespace.objects.filter(
        access_grants__in=AccessGrant.objects.live().filter(person=user)
    ).distinct()


def filter_by_state(grants: QuerySet[AccessGrant], state: str) -> QuerySet[AccessGrant]:
    """The grants in one of STATES, as AccessGrant.state says, in one query."""
    now = timezone.now()
    started = Q(revoked_at__isnull=True)
    by_state = {
        "pending": started & Q(request__state="submitted"),
        "granting": started
        & Q(request__state__in=("approved", "provisioning", "awaiting_merge"), expires_at__gt=now),
        "active": started & Q(request__state="ready", expires_at__gt=now),
        "expired": started
        & Q(expires_at__lte=now)
        & ~Q(request__state__in=("rejected", "cancelled", "returned", "failed")),
        "revoked": Q(revoked_at__isnull=False),
        "refused": started & Q(request__state__in=("rejected", "cancelled", "returned")),
        "failed": started & Q(request__state="failed"),
    }
    return grants.filter(by_state[state])
