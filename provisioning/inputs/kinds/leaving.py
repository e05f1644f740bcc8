"""What a tenant's (or a project's) namespaces leaving a cluster take with them: their
Kargo side, and the tenant's own objects when nothing of it stays there."""

from __future__ import annotations

from provisioning.inputs.kinds.base import Draft
from provisioning.inputs.specs import GITOPS_LIVE_STATES, kargo_project, tenant_engines
from tenants.choices import GitOpsEngine
from tenants.models import Cluster, Namespace, Tenant


def leaving(
    tenant: Tenant, cluster: Cluster, going: list[Namespace], *, engine: str, project: str = ""
) -> Draft:
    removed = [ns.name for ns in going]
    remove_kargo = ()
    if cluster.has_kargo:
        remove_kargo = tuple(
            kargo_project(tenant, cluster, name)
            for name in sorted(
                {
                    ns.project.name
                    for ns in going
                    if ns.project_id and ns.project.gitops_engine == GitOpsEngine.ARGOCD_KARGO
                }
            )
        )
    staying = Namespace.objects.filter(
        tenant=tenant, cluster=cluster, state__in=GITOPS_LIVE_STATES
    ).exclude(name__in=removed)
    return Draft(
        cluster=cluster,
        engine=engine,
        project=project,
        removed=removed,
        remove_kargo=remove_kargo,
        # The tenant's last namespace there: its roots go too.
        remove_engines=(
            frozenset() if staying.exists() else tenant_engines(tenant, cluster, engine)
        ),
    )
