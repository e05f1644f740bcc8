"""A request's plan input: what its kind brings (`provisioning.inputs.kinds`), with what
every plan reads alike."""

from __future__ import annotations

from dataclasses import replace

from django.db import DatabaseError

from provisioning.inputs.kinds import plan_kind_for
from provisioning.inputs.reads import claimed_name, claims_of, prefetch, shared_reads
from provisioning.inputs.specs import cluster_spec, fenced_tenant, tenant_engines, tenant_spec
from provisioning.plan import (
    ARGOCD,
    PlanInput,
)
from tenants.choices import (
    NamePurpose,
)
from tenants.models import (
    Request,
)


def plan_input_for(tenancy_request: Request) -> PlanInput:
    """What the plan of this request is rendered from, as the database stands now."""
    tenant = tenancy_request.tenant
    kind = plan_kind_for(tenancy_request.kind)
    draft = kind.draft(tenancy_request)
    cluster, engine = draft.cluster, draft.engine
    engines = tenant_engines(tenant, cluster, engine)
    applied = engines if kind.applies_tenant_objects else frozenset()
    # The tenant's namespaces there change and its roots stay: its AppProject follows.
    refence = (
        not applied
        and kind.changes_namespaces
        and bool(draft.namespaces or draft.removed)
        and not draft.remove_engines
        and ARGOCD in engines
    )
    inputs = PlanInput(
        request_id=tenancy_request.pk,
        tenant=(
            fenced_tenant(tenant, cluster) if applied or refence else tenant_spec(tenant, cluster)
        ),
        cluster=cluster_spec(cluster),
        engine=engine,
        namespaces=tuple(draft.namespaces),
        project=draft.project,
        remove_namespaces=tuple(draft.removed),
        kargo_namespace=claimed_name(cluster, tenant, NamePurpose.KARGO, app=draft.project),
        tenant_engines=applied,
        kargo_projects=draft.kargo,
        remove_kargo=draft.remove_kargo,
        remove_tenant_engines=draft.remove_engines,
        refence=refence,
        grants=draft.grants,
    )
    return replace(inputs, claims=claims_of(inputs, cluster))


def plan_inputs_for(requests: list[Request]) -> dict[int, PlanInput | Exception]:
    """`plan_input_for` of several requests, what they share read once: each one's inputs,
    or the error that stopped it (a tier, project or namespace it names is gone)."""
    found: dict[int, PlanInput | Exception] = {}
    with shared_reads():
        if len(requests) > 1:
            prefetch(requests)
        for tenancy_request in requests:
            try:
                found[tenancy_request.pk] = plan_input_for(tenancy_request)
            except DatabaseError:
                raise  # the database went away: nothing to say of the request
            except Exception as error:
                found[tenancy_request.pk] = error
    return found
