"""The access map's source: the tenant's plans as a tenant_sync would render them now, on
every cluster where it has live namespaces (provisioning.grants reads the rights off them)."""

from __future__ import annotations

from provisioning.grants import grants_in
from provisioning.inputs import clusters_of, kept_input
from provisioning.plan import render
from tenants.models import Tenant
from tenants.provisioner import Grant


def access_grants(tenant: Tenant) -> list[Grant]:
    """Every right the tenant's plans give, rendered with the code that provisions."""
    grants: list[Grant] = []
    for cluster in clusters_of(tenant):
        grants += grants_in(tenant.slug, cluster.name, render(kept_input(tenant, cluster)).apply)
    return grants
