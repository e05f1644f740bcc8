"""A new namespace: one tier of an application without a project."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PayloadApp, sized_namespace
from provisioning.inputs.reads import cluster_named, recorded_name, tier_named
from provisioning.inputs.specs import tier_spec
from tenants.choices import RequestKind
from tenants.models import Request


class NamespacePlan(PayloadApp):
    value = RequestKind.NAMESPACE
    app_key = "app"
    applies_tenant_objects = True
    batched = True
    follows_its_namespace = True

    def draft(self, tenancy_request: Request) -> Draft:
        payload = tenancy_request.payload
        tier = tier_named(payload["tier"])
        return Draft(
            cluster=cluster_named(payload["cluster"]),
            engine=tenancy_request.tenant.gitops_engine,
            namespaces=[
                sized_namespace(
                    payload,
                    name=recorded_name(tenancy_request, payload["app"], tier),
                    tier=tier_spec(tier),
                )
            ],
        )


KIND = NamespacePlan()
