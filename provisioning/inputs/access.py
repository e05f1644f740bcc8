"""Access grants as plans take them (provisioning.plan.GrantSpec): an access request's own
grant, and the live grants a namespace's desired state holds."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC

from provisioning.plan import GrantSpec
from tenants.models import AccessGrant


def grant_spec(grant: AccessGrant) -> GrantSpec:
    expires = grant.expires_at
    return GrantSpec(
        id=grant.pk,
        request_id=grant.request_id,
        namespace=grant.namespace.name,
        role=grant.role,
        cluster_role=grant.cluster_role,
        subject=grant.subject,
        minutes=int(grant.duration.total_seconds() // 60),
        expires_at=expires.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if expires else "",
        offered=tuple(sorted(set(grant.namespace.tier.access_roles().values()))),
    )


def live_grants(namespace_ids: Iterable[int]) -> dict[int, tuple[GrantSpec, ...]]:
    """Namespace id -> the grants live there now, in one query: those whose tier still binds
    their role to their ClusterRole (a grant never outlasts what its tier allows: the
    binding of one it no longer does is removed with the namespace's next reconcile)."""
    found: dict[int, list[GrantSpec]] = defaultdict(list)
    ids = list(namespace_ids)
    if not ids:
        return {}
    for grant in (
        AccessGrant.objects.live()
        .filter(namespace_id__in=ids)
        .select_related("namespace__tier")
        .order_by("pk")
    ):
        if grant.namespace.tier.access_roles().get(grant.role) == grant.cluster_role:
            found[grant.namespace_id].append(grant_spec(grant))
    return {namespace_id: tuple(specs) for namespace_id, specs in found.items()}
