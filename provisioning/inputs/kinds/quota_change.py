"""A live namespace with its new quota (Berth's alone: no GitOps file changes)."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PlanKind, sized_namespace
from provisioning.inputs.specs import live_namespace, pinned_tier_spec
from tenants.choices import RequestKind
from tenants.models import Request


class QuotaChangePlan(PlanKind):
    value = RequestKind.QUOTA_CHANGE
    writes_repository = False

    def draft(self, tenancy_request: Request) -> Draft:
        tenant, payload = tenancy_request.tenant, tenancy_request.payload
        current = live_namespace(tenant, payload["namespace"])
        return Draft(
            cluster=current.cluster,
            engine=tenant.gitops_engine,
            namespaces=[
                sized_namespace(
                    payload,
                    name=current.name,
                    tier=pinned_tier_spec(current),
                    project=current.project.name if current.project else "",
                )
            ],
        )


KIND = QuotaChangePlan()
