"""A new project: a namespace in each of its tiers, and its Kargo side."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PayloadApp, project_draft
from provisioning.inputs.reads import cluster_named, recorded_names
from provisioning.inputs.specs import tier_spec
from provisioning.plan import NamespaceSpec
from tenants.choices import RequestKind
from tenants.models import EnvironmentTier, Request
from tenants.naming import namespace_name


class ProjectPlan(PayloadApp):
    value = RequestKind.PROJECT
    app_key = "app"
    applies_tenant_objects = True
    batched = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant, payload = tenancy_request.tenant, tenancy_request.payload
        cluster = cluster_named(payload["cluster"])
        engine, project = payload["engine"], payload["app"]
        tiers = list(EnvironmentTier.objects.filter(slug__in=payload["tiers"]))
        recorded = recorded_names(tenancy_request, tiers)
        namespaces = [
            NamespaceSpec(
                name=recorded.get(tier.pk) or namespace_name(tenant.slug, project, tier.slug),
                tier=tier_spec(tier),
                cpu_millis=tier.default_cpu_millis,
                memory_mib=tier.default_memory_mib,
                storage_gib=tier.default_storage_gib,
                project=project,
            )
            for tier in tiers
        ]
        return project_draft(tenant, cluster, engine, project, namespaces)

    def unrecorded_project(self, tenancy_request: Request, app: str) -> tuple[str, str]:
        engine = tenancy_request.payload.get("engine") or tenancy_request.tenant.gitops_engine
        return engine, app


KIND = ProjectPlan()
