"""The `request` variable approval rules see, in one shape for every caller: admission and
deploy tokens (tenants.policy) and the what-if's reconstruction of an older decision
(tenants.selectors.whatif). A key added here reaches all three."""

from __future__ import annotations

from typing import Any, Protocol

from tenants.models import Membership, Tenant, User
from tenants.selectors.rights import is_platform_admin


class Amounts(Protocol):
    """What is asked for: a kind's demand (tenants.budget.Usage) or a namespace's size."""

    @property
    def cpu_millis(self) -> int: ...
    @property
    def memory_mib(self) -> int: ...
    @property
    def storage_gib(self) -> int: ...


def rule_attributes(
    *,
    kind: str,
    tenant: Tenant,
    tiers: list[str],
    cluster: str,
    amounts: Amounts,
    ephemeral: bool,
    requester: User,
    role: str | None = None,
    access: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`tiers` in the order of their positions (`tier` is the last); `role` is the
    requester's in the tenant, read when not given; `access`: the role and minutes an
    access request asks for (empty for every other kind)."""
    if role is None:
        role = (
            Membership.objects.filter(tenant=tenant, user=requester)
            .values_list("role", flat=True)
            .first()
        )
    return {
        "kind": kind,
        "tenant": tenant.slug,
        "tier": tiers[-1] if tiers else "",
        "tiers": tiers,
        "cluster": cluster,
        "cpu_millis": amounts.cpu_millis,
        "memory_mib": amounts.memory_mib,
        "storage_gib": amounts.storage_gib,
        "ephemeral": ephemeral,
        "requester": requester.username,
        "requester_role": role or "",
        "requester_groups": list(requester.last_groups or []),
        "requester_platform_admin": is_platform_admin(requester),
        "access_role": "",
        "access_minutes": 0,
        "sleep_mode": "",
        "sleep_within_tier": False,
        **(access or {}),
    }
