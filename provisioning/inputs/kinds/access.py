"""A person's access grant: its binding alone, in its namespace (nothing in the repository:
a grant lasts hours, the GitOps files describe what lasts)."""

from __future__ import annotations

from provisioning.inputs.access import grant_spec
from provisioning.inputs.kinds.base import Draft, PlanKind
from provisioning.plan import PlanInput
from tenants.choices import RequestKind
from tenants.models import AccessGrant, Request


class AccessPlan(PlanKind):
    value = RequestKind.ACCESS
    writes_repository = False

    def draft(self, tenancy_request: Request) -> Draft:
        grant = AccessGrant.objects.select_related("namespace__cluster", "namespace__tier").get(
            request=tenancy_request
        )
        return Draft(
            cluster=grant.namespace.cluster,
            engine=tenancy_request.tenant.gitops_engine,
            grants=(grant_spec(grant),),
        )

    def gitops_apps(self, tenancy_request: Request, inputs: PlanInput) -> list[str]:
        return []


KIND = AccessPlan()
