"""A project's new environment: one more tier of it, and its Kargo side."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PayloadApp, project_draft, sized_namespace
from provisioning.inputs.reads import cluster_named, recorded_name, tier_named
from provisioning.inputs.specs import tier_spec
from tenants.choices import RequestKind
from tenants.models import Project, Request


class EnvironmentPlan(PayloadApp):
    value = RequestKind.ENVIRONMENT
    applies_tenant_objects = True
    batched = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant, payload = tenancy_request.tenant, tenancy_request.payload
        cluster = cluster_named(payload["cluster"])
        app = Project.objects.get(tenant=tenant, name=payload["project"])
        engine, project = app.gitops_engine, app.name
        tier = tier_named(payload["tier"])
        namespaces = [
            sized_namespace(
                payload,
                name=recorded_name(tenancy_request, project, tier),
                tier=tier_spec(tier),
                project=project,
            )
        ]
        return project_draft(tenant, cluster, engine, project, namespaces)


KIND = EnvironmentPlan()
