"""One live namespace, removed."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PlanKind
from provisioning.inputs.specs import live_namespace
from tenants.choices import RequestKind
from tenants.models import Request


class DecommissionPlan(PlanKind):
    value = RequestKind.DECOMMISSION
    changes_namespaces = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant = tenancy_request.tenant
        current = live_namespace(
            tenant, tenancy_request.payload["namespace"], removed_by=tenancy_request
        )
        return Draft(cluster=current.cluster, engine=tenant.gitops_engine, removed=[current.name])


KIND = DecommissionPlan()
