"""An ephemeral environment: its own namespace, or none (it lives in a shared one)."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft, PayloadApp, sized_namespace
from provisioning.inputs.reads import cluster_named, tier_named
from provisioning.inputs.specs import tier_spec
from tenants.choices import RequestKind
from tenants.models import Project, Request


class EphemeralPlan(PayloadApp):
    value = RequestKind.EPHEMERAL
    batched = True
    changes_namespaces = True
    follows_its_namespace = True
    owns_payload_namespace = True

    def draft(self, tenancy_request: Request) -> Draft:
        tenant, payload = tenancy_request.tenant, tenancy_request.payload
        cluster = cluster_named(payload["cluster"])
        app = Project.objects.get(tenant=tenant, name=payload["project"])
        draft = Draft(cluster=cluster, engine=app.gitops_engine, project=app.name)
        if payload["creates_namespace"]:
            draft.namespaces.append(
                sized_namespace(
                    payload,
                    name=payload["namespace"],
                    tier=tier_spec(tier_named(payload["tier"])),
                    project="" if payload["shared"] else app.name,
                )
            )
        return draft


KIND = EphemeralPlan()
