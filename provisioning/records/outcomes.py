"""What a finished run changes in Berth's records: the namespaces it created, active with
what their plan rendered; the project it made; the ephemeral environment it started or ended;
the namespaces it is removing."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from provisioning.plan import PlanInput
from provisioning.records import access, sleep
from provisioning.versions import bundle_digest, tier_definition, tier_digest
from tenants import audit
from tenants.bulk import update_each
from tenants.choices import (
    EnvironmentState,
    NamespaceState,
)
from tenants.kinds import kind_for
from tenants.models import (
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
)
from tenants.services import allocations, definitions
from tenants.services.names import release_namespaces

LIVE_STATES = (NamespaceState.PENDING, NamespaceState.ACTIVE)


@transaction.atomic
def record_namespaces_pending(
    *, requests: list[tuple[Request, PlanInput]], cluster: Cluster
) -> None:
    """The names these requests claimed become namespaces being provisioned on `cluster`."""
    Namespace.objects.filter(
        request__in=[r for r, _ in requests], state=NamespaceState.REQUESTED
    ).update(state=NamespaceState.PENDING)
    specs = [
        (tenancy_request, inputs, spec)
        for tenancy_request, inputs in requests
        for spec in inputs.namespaces
    ]
    taken = set(
        Namespace.objects.filter(
            cluster=cluster,
            name__in=[spec.name for _, _, spec in specs],
            state__in=LIVE_STATES,
        ).values_list("name", flat=True)
    )
    tiers = {
        tier.slug: tier
        for tier in EnvironmentTier.objects.filter(
            slug__in={spec.tier.slug for _, _, spec in specs}
        )
    }
    projects = {
        (r.tenant_id, inputs.project): Project.objects.filter(
            tenant=r.tenant, name=inputs.project
        ).first()
        for r, inputs in requests
        if inputs.project
    }
    Namespace.objects.bulk_create(
        [
            Namespace(
                name=spec.name,
                tenant=tenancy_request.tenant,
                cluster=cluster,
                tier=tiers[spec.tier.slug],
                project=projects.get((tenancy_request.tenant_id, inputs.project)),
                cpu_millis=spec.cpu_millis,
                memory_mib=spec.memory_mib,
                storage_gib=spec.storage_gib,
                request=tenancy_request,
            )
            for tenancy_request, inputs, spec in specs
            if spec.name not in taken
        ]
    )


@transaction.atomic
def record_outcomes(*, requests: list[tuple[Request, PlanInput]]) -> None:
    """After successful runs: Berth's records say what the cluster now has."""
    for tenancy_request, inputs in requests:
        if kind_for(tenancy_request.kind).creates_project:
            project, _ = Project.objects.get_or_create(
                tenant=tenancy_request.tenant,
                name=inputs.project,
                defaults={"gitops_engine": inputs.engine},
            )
            Namespace.objects.filter(
                tenant=tenancy_request.tenant,
                name__in=[ns.name for ns in inputs.namespaces],
                project__isnull=True,
            ).update(project=project)
    _activate_namespaces(requests)
    for tenancy_request, inputs in requests:
        _record_environment_outcome(tenancy_request, inputs)
        if kind_for(tenancy_request.kind).sets_sleep_schedule:
            sleep.record_schedule(tenancy_request)


def _activate_namespaces(requests: list[tuple[Request, PlanInput]]) -> None:
    """Each request's namespaces active, as its plan rendered them (quota, tier and
    template revisions)."""
    specs = {
        (r.tenant_id, inputs.cluster.name, spec.name): spec
        for r, inputs in requests
        for spec in inputs.namespaces
    }
    if not specs:
        return
    live = [
        namespace
        for namespace in Namespace.objects.filter(
            cluster__name__in={cluster for _, cluster, _ in specs},
            name__in={name for _, _, name in specs},
            state__in=LIVE_STATES,
        ).select_related("tier", "cluster")
        if (namespace.tenant_id, namespace.cluster.name, namespace.name) in specs
    ]
    if not live:
        return
    spec_of = {
        namespace.pk: specs[(namespace.tenant_id, namespace.cluster.name, namespace.name)]
        for namespace in live
    }
    revisions = _revisions_applied(live, spec_of)
    bundle = definitions.bundle_revision(digest=bundle_digest())
    update_each(
        Namespace,
        {
            namespace.pk: {
                "state": NamespaceState.ACTIVE,
                "cpu_millis": spec_of[namespace.pk].cpu_millis,
                "memory_mib": spec_of[namespace.pk].memory_mib,
                "storage_gib": spec_of[namespace.pk].storage_gib,
                "tier_revision": revisions[namespace.tier_id].pk,
                "bundle_revision": bundle.pk,
            }
            for namespace in live
        },
    )
    # Showback from here on: what an active namespace held until now was its recorded quota.
    before = {
        namespace.pk: (namespace.cpu_millis, namespace.memory_mib, namespace.storage_gib)
        for namespace in live
        if namespace.state == NamespaceState.ACTIVE
    }
    for namespace in live:
        spec = spec_of[namespace.pk]
        namespace.cpu_millis, namespace.memory_mib = spec.cpu_millis, spec.memory_mib
        namespace.storage_gib = spec.storage_gib
    allocations.record_held(live, before=before)


def _record_environment_outcome(tenancy_request: Request, inputs: PlanInput) -> None:
    """An ephemeral environment started, or one ended (and the namespaces it removed)."""
    tenant = tenancy_request.tenant
    if kind_for(tenancy_request.kind).starts_environment:
        EphemeralEnvironment.objects.filter(
            request=tenancy_request, state=EnvironmentState.STARTING
        ).update(state=EnvironmentState.LIVE)
    ending = environment_ended_by(tenancy_request)
    if ending is not None:
        cause = tenancy_request.payload.get("cause", "")
        EphemeralEnvironment.objects.filter(pk=ending.pk).update(
            state=EnvironmentState.ENDED, ended_at=timezone.now(), end_cause=cause
        )
        audit.record(
            actor=None,
            action="environment.ended",
            obj=ending,
            tenant_id=ending.tenant_id,
            after={
                "cause": cause,
                "request": tenancy_request.pk,
                "namespace_deleted": bool(inputs.remove_namespaces),
            },
        )
    if inputs.remove_namespaces:
        gone = Namespace.objects.filter(
            tenant=tenant, cluster__name=inputs.cluster.name, name__in=inputs.remove_namespaces
        ).exclude(state=NamespaceState.DECOMMISSIONED)
        release_namespaces(gone)  # their names are free again
        removed = list(gone.values_list("pk", flat=True))
        allocations.record_released(removed)
        access.grants_of_removed(removed, cause=f"request {tenancy_request.pk}")
        gone.update(state=NamespaceState.DECOMMISSIONED, drift=[])


def _revisions_applied(live: list[Namespace], spec_of: dict[int, Any]) -> dict[int, Any]:
    """Tier id -> the revision of the tier definition the run rendered these namespaces
    from (the plan's own TierSpec, not the tier as it may stand by now)."""
    wanted = {}
    for namespace in live:
        tier = spec_of[namespace.pk].tier
        wanted[namespace.tier] = (tier_digest(tier), tier_definition(tier))
    return definitions.tier_revisions(wanted=wanted)


def environment_ended_by(tenancy_request: Request) -> EphemeralEnvironment | None:
    if not kind_for(tenancy_request.kind).ends_environment:
        return None
    return EphemeralEnvironment.objects.get(pk=tenancy_request.payload["environment"])


def mark_namespaces_decommissioning(*, tenancy_request: Request, inputs: PlanInput) -> list[int]:
    """Returns the ids of the requests that created them, for their own lifecycle."""
    namespaces = Namespace.objects.filter(
        tenant=tenancy_request.tenant,
        cluster__name=inputs.cluster.name,
        name__in=inputs.remove_namespaces,
        state=NamespaceState.ACTIVE,
    )
    creators = list(namespaces.exclude(request=None).values_list("request_id", flat=True))
    namespaces.update(state=NamespaceState.DECOMMISSIONING)
    return creators
