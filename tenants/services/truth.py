"""Acting on the truth table: a platform admin's repair, through the normal request path."""

from __future__ import annotations

from tenants import audit
from tenants.errors import NotAllowed
from tenants.models import Request, Tenant, User
from tenants.selectors import is_platform_admin
from tenants.services.onboarding import request_tenant_sync


def repair_truth(*, tenant: Tenant, actor: User, source_ip: str | None = None) -> list[Request]:
    """Put back what drifted or went missing: a tenant_sync request per cluster the tenant
    uses, which re-applies its objects there and re-commits its applications' files. The
    approval rules decide it like any request; orphans are left for a person to judge (Berth
    deletes only what its records own)."""
    if not is_platform_admin(actor):
        raise NotAllowed("Only platform admins may repair a tenant.")
    table = getattr(tenant, "truth_table", None)
    disagreeing = sum(
        n
        for state, n in (table.counts if table else {}).items()
        if state not in ("in_sync", "orphan")
    )
    made = request_tenant_sync(
        tenant=tenant,
        actor=actor,
        reason=f"Repair from the truth table: {disagreeing} object(s) drifted or missing.",
    )
    audit.record(
        actor=actor,
        action="tenant.repair",
        obj=tenant,
        tenant_id=tenant.pk,
        after={"requests": [r.pk for r in made], "disagreeing": disagreeing},
        source_ip=source_ip,
    )
    return made
