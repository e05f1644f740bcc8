"""A tenant leaving a cluster: every namespace it has there, and its own objects."""

from __future__ import annotations

from typing import Any

from provisioning.inputs.kinds.base import Draft, PlanKind
from provisioning.inputs.kinds.leaving import leaving
from provisioning.inputs.reads import cluster_named
from provisioning.inputs.specs import active_namespaces, app_of
from provisioning.plan import PlanInput
from tenants.choices import RequestKind
from tenants.models import Namespace, Request


class TenantDecommissionPlan(PlanKind):
    value = RequestKind.TENANT_DECOMMISSION
    changes_namespaces = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant = tenancy_request.tenant
        cluster = cluster_named(tenancy_request.payload["cluster"])
        going = active_namespaces(tenant, cluster, removed_by=tenancy_request)
        return leaving(tenant, cluster, going, engine=tenant.gitops_engine)

    def gitops_apps(self, tenancy_request: Request, inputs: PlanInput) -> list[str]:
        """Every application it had there."""
        going = Namespace.objects.filter(
            tenant=tenancy_request.tenant,
            cluster__name=inputs.cluster.name,
            name__in=inputs.remove_namespaces,
        ).select_related("project", "request")
        return sorted({app for app in map(app_of, going) if app})

    def retires_tenant(self, payload: dict[str, Any]) -> bool:
        return bool(payload.get("retire"))


KIND = TenantDecommissionPlan()
