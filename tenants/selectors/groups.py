"""The OIDC groups tenants name, across every tenant: what a new group name must not look
like (tenants.validators.validate_tenant_groups). Not scoped to a viewer: only platform
admins change tenants' groups, and the answer is a refusal, never a list shown."""

from __future__ import annotations

from tenants.models import Tenant


def groups_of_other_tenants(tenant: Tenant | None = None) -> set[str]:
    """Every group any tenant but `tenant` binds, in any role: one query."""
    others = Tenant.objects.exclude(pk=tenant.pk) if tenant is not None else Tenant.objects
    rows = others.values_list("owner_groups", "member_groups", "viewer_groups")
    return {
        group for row in rows for groups in row for group in groups or () if isinstance(group, str)
    }
