"""What the GitOps files of a request's application are rendered from."""

from __future__ import annotations

from django.db.models import Q

from provisioning.inputs.kinds import plan_kind_for
from provisioning.inputs.reads import claimed_name
from provisioning.inputs.specs import GITOPS_LIVE_STATES, app_of, namespace_spec
from provisioning.plan import (
    PlanInput,
)
from tenants.choices import (
    EnvironmentState,
    NamePurpose,
    NamespaceState,
)
from tenants.kinds import kinds_where
from tenants.models import (
    Cluster,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
)


def apps_of_request(tenancy_request: Request, inputs: PlanInput) -> list[str]:
    """The applications whose GitOps files a request changes: one, or for a tenant leaving
    a cluster every application it had there, or none (the tenant's own objects)."""
    return plan_kind_for(tenancy_request.kind).gitops_apps(tenancy_request, inputs)


def app_of_request(tenancy_request: Request, inputs: PlanInput) -> str:
    return plan_kind_for(tenancy_request.kind).app(tenancy_request, inputs)


def gitops_input_for(
    tenancy_request: Request, inputs: PlanInput, app: str | None = None
) -> PlanInput:
    """What the GitOps files of the application `app` (the one this request touches, when
    not given) are rendered from.

    Every live environment of that application as the database stands now: the request's
    own namespaces included (they are pending by then), the ones it removes left out. The
    writer reads this under the repository lock, so a later writer always sees what an
    earlier one wrote. One environment per tier: the request's own cluster wins.
    """
    tenant = tenancy_request.tenant
    if app is None:
        app = app_of_request(tenancy_request, inputs)
    project = Project.objects.filter(tenant=tenant, name=app).first() if app else None
    if project is not None:
        engine, project_name = project.gitops_engine, project.name
    else:
        engine, project_name = plan_kind_for(tenancy_request.kind).unrecorded_project(
            tenancy_request, app
        )

    chosen: dict[str, Namespace] = {}
    of_app = (
        Q(project__name=app)
        | Q(project__isnull=True, request__payload__app=app)
        | Q(project__isnull=True, request__payload__project=app)
    )
    # The request's own names count from the moment they are claimed: a preview before
    # approval shows what approving would write.
    alive = Q(state__in=GITOPS_LIVE_STATES) | Q(
        request=tenancy_request, state=NamespaceState.REQUESTED
    )
    live = (
        Namespace.objects.filter(of_app, alive, tenant=tenant)
        .exclude(cluster__name=inputs.cluster.name, name__in=inputs.remove_namespaces)
        # Ephemeral environments' namespaces: their files come from the environments below.
        .exclude(request__kind__in=kinds_where(starts_environment=True))
        .select_related("tier", "tier_revision", "project", "request", "cluster")
        .order_by("pk")
    )
    for namespace in live:
        if not app or app_of(namespace) != app:
            continue
        held = chosen.get(namespace.tier.slug)
        if held is None or (
            held.cluster.name != inputs.cluster.name
            and namespace.cluster.name == inputs.cluster.name
        ):
            chosen[namespace.tier.slug] = namespace
    environments = sorted(chosen.values(), key=lambda ns: (ns.tier.position, ns.tier.slug))
    specs = [namespace_spec(ns) for ns in environments]
    specs += [
        namespace_spec(environment.namespace, project=project_name, environment=environment.slug)
        for environment in _ephemeral_environments(tenancy_request, app, inputs)
    ]
    kargo = (
        inputs.kargo_namespace
        if project_name == inputs.project
        else claimed_name(
            Cluster.objects.get(name=inputs.cluster.name),
            tenant,
            NamePurpose.KARGO,
            app=project_name,
        )
    )
    return PlanInput(
        request_id=tenancy_request.pk,
        tenant=inputs.tenant,
        cluster=inputs.cluster,
        engine=engine,
        namespaces=tuple(specs),
        project=project_name,
        remove_namespaces=inputs.remove_namespaces,
        app=app,
        kargo_namespace=kargo,
    )


def _ephemeral_environments(
    tenancy_request: Request, app: str, inputs: PlanInput
) -> list[EphemeralEnvironment]:
    """The application's ephemeral environments as they stand in the repository once this
    request is done: the live ones, the one it starts, not the one it ends. Others that are
    ending keep their files until their own end request removes them with their namespace,
    so each environment goes in a commit of its own."""
    if not app:
        return []
    mine = Q(request=tenancy_request, state=EnvironmentState.STARTING)
    present = Q(state__in=(EnvironmentState.LIVE, EnvironmentState.ENDING))
    query = EphemeralEnvironment.objects.filter(
        present | mine, tenant=tenancy_request.tenant, project__name=app
    )
    ending = plan_kind_for(tenancy_request.kind).ending_environment(tenancy_request.payload)
    if ending is not None:
        query = query.exclude(pk=ending)
    return list(
        query.exclude(
            namespace__cluster__name=inputs.cluster.name,
            namespace__name__in=inputs.remove_namespaces,
        )
        .select_related("namespace__tier", "namespace__tier_revision", "namespace__cluster")
        .order_by("slug")
    )
