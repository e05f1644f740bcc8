"""The tenant's own objects on a cluster, with every live namespace as its records say."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PlanKind
from provisioning.inputs.reads import cluster_named
from provisioning.inputs.specs import apps_on, kept_on
from provisioning.plan import PlanInput
from tenants.choices import RequestKind
from tenants.models import Request


class TenantSyncPlan(PlanKind):
    value = RequestKind.TENANT_SYNC
    applies_tenant_objects = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant = tenancy_request.tenant
        cluster = cluster_named(tenancy_request.payload["cluster"])
        namespaces, kargo = kept_on(tenant, cluster)
        return Draft(
            cluster=cluster, engine=tenant.gitops_engine, namespaces=namespaces, kargo=kargo
        )

    def gitops_apps(self, tenancy_request: Request, inputs: PlanInput) -> list[str]:
        # Every application living on the cluster: its files follow the records too (a
        # changed repository, a file deleted by hand), which makes a sync the repair.
        return apps_on(tenancy_request.tenant, inputs.cluster.name)


KIND = TenantSyncPlan()
