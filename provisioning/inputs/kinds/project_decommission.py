"""A project leaving a cluster: every namespace it has there."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PayloadApp
from provisioning.inputs.kinds.leaving import leaving
from provisioning.inputs.reads import cluster_named
from provisioning.inputs.specs import active_namespaces
from tenants.choices import RequestKind
from tenants.models import Project, Request


class ProjectDecommissionPlan(PayloadApp):
    value = RequestKind.PROJECT_DECOMMISSION
    changes_namespaces = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant, payload = tenancy_request.tenant, tenancy_request.payload
        cluster = cluster_named(payload["cluster"])
        app = Project.objects.get(tenant=tenant, name=payload["project"])
        going = active_namespaces(tenant, cluster, removed_by=tenancy_request, project=app)
        return leaving(tenant, cluster, going, engine=app.gitops_engine, project=app.name)


KIND = ProjectDecommissionPlan()
