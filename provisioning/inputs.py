"""Read the database into the frozen inputs `provisioning.plan` renders from.

The only database access on the way to a plan; everything after it is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TypeVar

from django.db import DatabaseError
from django.db.models import Q

from provisioning import gitops
from provisioning.plan import (
    ClaimSpec,
    ClusterSpec,
    KargoProject,
    NamespaceSpec,
    PlanInput,
    RepoCredential,
    TenantSpec,
    TierSpec,
    engine_family,
)
from provisioning.versions import tier_from_definition
from tenants.choices import (
    EnvironmentState,
    GitOpsEngine,
    NamePurpose,
    NamespaceState,
    RequestKind,
)
from tenants.models import (
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    NamespaceClaim,
    Project,
    Request,
    Tenant,
)
from tenants.naming import kargo_namespace, namespace_name

T = TypeVar("T")
# Inside `shared_reads`: what the plans of one batch read alike, by what was asked.
_shared: ContextVar[dict[Hashable, object] | None] = ContextVar("berth_plan_reads", default=None)


@contextmanager
def shared_reads() -> Iterator[None]:
    """Within it, what several plans read alike (a cluster, a tier, a tenant's claimed names,
    engines and credentials) is read once. For the plans of one batch, rendered before the
    batch writes anything. Inside another, it is that one."""
    if _shared.get() is not None:
        yield
        return
    token = _shared.set({})
    try:
        yield
    finally:
        _shared.reset(token)


def _read_once(key: Hashable, read: Callable[[], T]) -> T:
    cache = _shared.get()
    if cache is None:
        return read()
    if key not in cache:
        cache[key] = read()
    return cache[key]  # type: ignore[return-value]


def _cluster(name: str) -> Cluster:
    return _read_once(("cluster", name), lambda: Cluster.objects.get(name=name))


def _tier(slug: str) -> EnvironmentTier:
    return _read_once(("tier", slug), lambda: EnvironmentTier.objects.get(slug=slug))


def tier_spec(tier: EnvironmentTier) -> TierSpec:
    return TierSpec(
        slug=tier.slug,
        pod_security_level=tier.pod_security_level,
        network_preset=tier.network_preset,
        container_default_cpu_millis=tier.container_default_cpu_millis,
        container_default_memory_mib=tier.container_default_memory_mib,
        container_request_cpu_millis=tier.container_request_cpu_millis,
        container_request_memory_mib=tier.container_request_memory_mib,
        cluster_roles={
            "owner": tier.owner_cluster_role,
            "member": tier.member_cluster_role,
            "viewer": tier.viewer_cluster_role,
        },
        position=tier.position,
        is_ephemeral=tier.is_ephemeral,
    )


def pinned_tier_spec(namespace: Namespace) -> TierSpec:
    """The tier definition a namespace runs: the revision it was last applied from (by its
    request or an upgrade campaign), rendered again as it was, so a tier edited since
    reaches it only through a campaign. One made before Berth recorded revisions runs the
    tier as it stands (select `tier_revision` with the namespace)."""
    revision = namespace.tier_revision
    return tier_from_definition(revision.definition) if revision else tier_spec(namespace.tier)


def repo_credential(tenant: Tenant) -> RepoCredential | None:
    """How the tenant's engines authenticate to its repository, from its encrypted
    credential (`token`, `user:token`, or an SSH deploy key), as Berth's own git does."""
    url = tenant.gitops_repo_url.strip()
    if not url:
        return None
    try:
        remote = gitops.Remote.parse(url, credentials=tenant.gitops_credentials)
    except gitops.GitError:
        return None  # an unusable URL: the GitOps step says so
    if not remote.credentials or remote.transport not in ("https", "ssh"):
        return None
    if remote.transport == "https":
        user, token = gitops.token_pair(remote.credentials)
        return RepoCredential(transport="https", username=user, password=token)
    return RepoCredential(
        transport="ssh",
        ssh_private_key=gitops.private_key(remote.credentials),
        known_hosts=tenant.gitops_known_hosts.strip(),
    )


def tenant_spec(tenant: Tenant, cluster: Cluster | None = None) -> TenantSpec:
    return _read_once(
        ("tenant", tenant.pk, cluster.pk if cluster else None),
        lambda: _tenant_spec(tenant, cluster),
    )


def _tenant_spec(tenant: Tenant, cluster: Cluster | None) -> TenantSpec:
    return TenantSpec(
        slug=tenant.slug,
        name=tenant.name,
        groups={
            "owner": tuple(tenant.owner_groups),
            "member": tuple(tenant.member_groups),
            "viewer": tuple(tenant.viewer_groups),
        },
        repo_url=tenant.gitops_repo_url,
        repo_branch=tenant.gitops_branch or "main",
        repo_path=tenant.gitops_path,
        allowed_domains=tuple(tenant.allowed_domains),
        apps_namespace=(_claimed_name(cluster, tenant, NamePurpose.ARGOCD_APPS) if cluster else ""),
        gitops_namespace=_claimed_name(cluster, tenant, NamePurpose.GITOPS) if cluster else "",
        credential=repo_credential(tenant),
    )


def cluster_spec(cluster: Cluster) -> ClusterSpec:
    return ClusterSpec(
        name=cluster.name,
        argocd_namespace=cluster.argocd_namespace,
        has_kargo=cluster.has_kargo,
        ingress_namespace=cluster.ingress_namespace,
        argocd_impersonation=cluster.argocd_impersonation,
        argocd_repository_secrets=cluster.argocd_repository_secrets,
    )


def _live_namespace(tenant: Tenant, name: str) -> Namespace:
    return Namespace.objects.select_related("tier", "tier_revision", "cluster", "project").get(
        tenant=tenant, name=name, state__in=[NamespaceState.ACTIVE, NamespaceState.PENDING]
    )


def tenant_engines(tenant: Tenant, cluster: Cluster, *also: str) -> frozenset[str]:
    """The engines the tenant uses on a cluster: its default, those of its projects living
    there, and `also` (what the request brings)."""
    engines = {tenant.gitops_engine, *also}
    engines |= _read_once(
        ("engines", tenant.pk, cluster.pk),
        lambda: set(
            Project.objects.filter(
                tenant=tenant,
                environments__cluster=cluster,
                environments__state__in=GITOPS_LIVE_STATES,
            ).values_list("gitops_engine", flat=True)
        ),
    )
    return frozenset(engine_family(engine) for engine in engines if engine)


def kargo_project(
    tenant: Tenant, cluster: Cluster, project: str, adding: tuple[TierSpec, ...] = ()
) -> KargoProject:
    """A project's Kargo side on a cluster: every tier it has there, with `adding`."""
    tiers = {tier.slug: tier for tier in adding}
    for namespace in (
        Namespace.objects.filter(
            tenant=tenant,
            cluster=cluster,
            project__name=project,
            state__in=GITOPS_LIVE_STATES,
        )
        .select_related("tier", "tier_revision")
        .order_by("pk")
    ):
        tiers.setdefault(namespace.tier.slug, pinned_tier_spec(namespace))
    name = _claimed_name(cluster, tenant, NamePurpose.KARGO, app=project)
    return KargoProject(
        name=project,
        namespace=name or kargo_namespace(tenant.slug, project),
        tiers=tuple(sorted(tiers.values(), key=lambda t: (t.position, t.slug))),
    )


def _kargo_projects(
    tenant: Tenant, cluster: Cluster, engine: str, project: str, namespaces: list[NamespaceSpec]
) -> tuple[KargoProject, ...]:
    if engine != GitOpsEngine.ARGOCD_KARGO or not project or not cluster.has_kargo:
        return ()
    return (kargo_project(tenant, cluster, project, tuple(ns.tier for ns in namespaces)),)


def _active_namespaces(tenant: Tenant, cluster: Cluster, **where: object) -> list[Namespace]:
    return list(
        Namespace.objects.filter(
            tenant=tenant, cluster=cluster, state=NamespaceState.ACTIVE, **where
        )
        .select_related("tier", "tier_revision", "project", "request", "cluster")
        .order_by("name")
    )


def plan_input_for(tenancy_request: Request) -> PlanInput:
    """What the plan of this request is rendered from, as the database stands now."""
    tenant = tenancy_request.tenant
    payload = tenancy_request.payload
    kind = tenancy_request.kind
    engine = tenant.gitops_engine
    project = ""
    namespaces: list[NamespaceSpec] = []
    removed: list[str] = []
    # Requests that give the tenant (or a project) a home on a cluster apply the tenant's
    # own objects there too: its roots, AppProject, credentials; and the project's Kargo side.
    shared = kind in (
        RequestKind.NAMESPACE,
        RequestKind.PROJECT,
        RequestKind.ENVIRONMENT,
        RequestKind.TENANT_SYNC,
    )
    kargo: tuple[KargoProject, ...] = ()
    remove_kargo: tuple[KargoProject, ...] = ()
    remove_engines: frozenset[str] = frozenset()

    if kind == RequestKind.NAMESPACE:
        cluster = _cluster(payload["cluster"])
        tier = _tier(payload["tier"])
        namespaces.append(
            NamespaceSpec(
                name=_recorded_name(tenancy_request, payload["app"], tier),
                tier=tier_spec(tier),
                cpu_millis=payload["cpu_millis"],
                memory_mib=payload["memory_mib"],
                storage_gib=payload.get("storage_gib", 0),
            )
        )
    elif kind == RequestKind.PROJECT:
        cluster = _cluster(payload["cluster"])
        engine = payload["engine"]
        project = payload["app"]
        tiers = list(EnvironmentTier.objects.filter(slug__in=payload["tiers"]))
        recorded = _recorded_names(tenancy_request, tiers)
        for tier in tiers:
            namespaces.append(
                NamespaceSpec(
                    name=recorded.get(tier.pk) or namespace_name(tenant.slug, project, tier.slug),
                    tier=tier_spec(tier),
                    cpu_millis=tier.default_cpu_millis,
                    memory_mib=tier.default_memory_mib,
                    storage_gib=tier.default_storage_gib,
                    project=project,
                )
            )
        kargo = _kargo_projects(tenant, cluster, engine, project, namespaces)
    elif kind == RequestKind.ENVIRONMENT:
        cluster = _cluster(payload["cluster"])
        app = Project.objects.get(tenant=tenant, name=payload["project"])
        engine, project = app.gitops_engine, app.name
        tier = _tier(payload["tier"])
        namespaces.append(
            NamespaceSpec(
                name=_recorded_name(tenancy_request, project, tier),
                tier=tier_spec(tier),
                cpu_millis=payload["cpu_millis"],
                memory_mib=payload["memory_mib"],
                storage_gib=payload.get("storage_gib", 0),
                project=project,
            )
        )
        kargo = _kargo_projects(tenant, cluster, engine, project, namespaces)
    elif kind == RequestKind.QUOTA_CHANGE:
        current = _live_namespace(tenant, payload["namespace"])
        cluster = current.cluster
        namespaces.append(
            NamespaceSpec(
                name=current.name,
                tier=pinned_tier_spec(current),
                cpu_millis=payload["cpu_millis"],
                memory_mib=payload["memory_mib"],
                storage_gib=payload.get("storage_gib", 0),
                project=current.project.name if current.project else "",
            )
        )
    elif kind == RequestKind.EPHEMERAL:
        cluster = _cluster(payload["cluster"])
        app = Project.objects.get(tenant=tenant, name=payload["project"])
        engine, project = app.gitops_engine, app.name
        if payload["creates_namespace"]:
            tier = _tier(payload["tier"])
            namespaces.append(
                NamespaceSpec(
                    name=payload["namespace"],
                    tier=tier_spec(tier),
                    cpu_millis=payload["cpu_millis"],
                    memory_mib=payload["memory_mib"],
                    storage_gib=payload["storage_gib"],
                    project="" if payload["shared"] else project,
                )
            )
    elif kind == RequestKind.END_ENVIRONMENT:
        environment = EphemeralEnvironment.objects.select_related("namespace__cluster").get(
            pk=payload["environment"]
        )
        cluster = environment.namespace.cluster
        engine, project = environment.project.gitops_engine, environment.project.name
        if environment_takes_namespace(environment):
            removed.append(environment.namespace.name)
    elif kind == RequestKind.DECOMMISSION:
        current = _live_namespace(tenant, payload["namespace"])
        cluster = current.cluster
        removed.append(current.name)
    elif kind == RequestKind.TENANT_SYNC:
        cluster = _cluster(payload["cluster"])
        namespaces, kargo = _kept_on(tenant, cluster)
    elif kind in (RequestKind.PROJECT_DECOMMISSION, RequestKind.TENANT_DECOMMISSION):
        cluster = _cluster(payload["cluster"])
        if kind == RequestKind.PROJECT_DECOMMISSION:
            app = Project.objects.get(tenant=tenant, name=payload["project"])
            engine, project = app.gitops_engine, app.name
            going = _active_namespaces(tenant, cluster, project=app)
        else:
            going = _active_namespaces(tenant, cluster)
        removed = [ns.name for ns in going]
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
            tenant=tenant,
            cluster=cluster,
            state__in=GITOPS_LIVE_STATES,
        ).exclude(name__in=removed)
        if not staying.exists():  # the tenant's last namespace there: its roots go too
            remove_engines = tenant_engines(tenant, cluster, engine)
    else:  # pragma: no cover - payload validation admits only the kinds above
        raise ValueError(f"unknown request kind {kind!r}")

    inputs = PlanInput(
        request_id=tenancy_request.pk,
        tenant=tenant_spec(tenant, cluster),
        cluster=cluster_spec(cluster),
        engine=engine,
        namespaces=tuple(namespaces),
        project=project,
        remove_namespaces=tuple(removed),
        kargo_namespace=_claimed_name(cluster, tenant, NamePurpose.KARGO, app=project),
        tenant_engines=tenant_engines(tenant, cluster, engine) if shared else frozenset(),
        kargo_projects=kargo,
        remove_kargo=remove_kargo,
        remove_tenant_engines=remove_engines,
    )
    return replace(inputs, claims=claims_of(inputs, cluster))


def _kept_on(
    tenant: Tenant, cluster: Cluster
) -> tuple[list[NamespaceSpec], tuple[KargoProject, ...]]:
    """The tenant's live namespaces on a cluster and its projects' Kargo side there."""
    live = _active_namespaces(tenant, cluster)
    namespaces = [namespace_spec(ns, engine=_engine_of(ns, tenant)) for ns in live]
    kargo = (
        tuple(
            kargo_project(tenant, cluster, name)
            for name in sorted(
                {
                    ns.project.name
                    for ns in live
                    if ns.project_id and ns.project.gitops_engine == GitOpsEngine.ARGOCD_KARGO
                }
            )
        )
        if cluster.has_kargo
        else ()
    )
    return namespaces, kargo


def kept_input(tenant: Tenant, cluster: Cluster) -> PlanInput:
    """Everything Berth keeps for the tenant on a cluster now, as a tenant_sync would apply
    it: the live namespaces, the projects' Kargo side and the tenant's own objects."""
    namespaces, kargo = _kept_on(tenant, cluster)
    inputs = PlanInput(
        request_id=0,
        tenant=tenant_spec(tenant, cluster),
        cluster=cluster_spec(cluster),
        engine=tenant.gitops_engine,
        namespaces=tuple(namespaces),
        tenant_engines=tenant_engines(tenant, cluster),
        kargo_projects=kargo,
    )
    return replace(inputs, claims=claims_of(inputs, cluster))


def clusters_of(tenant: Tenant) -> list[Cluster]:
    """The clusters where the tenant has a live namespace."""
    return list(
        Cluster.objects.filter(namespaces__tenant=tenant, namespaces__state=NamespaceState.ACTIVE)
        .distinct()
        .order_by("name")
    )


def _engine_of(namespace: Namespace, tenant: Tenant) -> str:
    return namespace.project.gitops_engine if namespace.project_id else tenant.gitops_engine


def _recorded_name(tenancy_request: Request, app: str, tier: EnvironmentTier) -> str:
    """The name claimed for this request's namespace in this tier when it was submitted
    (names are computed once and recorded, never recomputed)."""
    recorded = _recorded_names(tenancy_request, [tier]).get(tier.pk)
    return recorded or namespace_name(tenancy_request.tenant.slug, app, tier.slug)


def _recorded_names(tenancy_request: Request, tiers: list[EnvironmentTier]) -> dict[int, str]:
    """tier id → the name recorded for this request's namespace in it, in one query (the
    latest row where a tier has several)."""
    recorded = _read_once(
        ("recorded", tenancy_request.pk),
        lambda: dict(
            Namespace.objects.filter(request=tenancy_request)
            .order_by("pk")
            .values_list("tier_id", "name")
        ),
    )
    return {tier.pk: recorded[tier.pk] for tier in tiers if tier.pk in recorded}


def _claimed_name(cluster: Cluster, tenant: Tenant, purpose: str, *, app: str = "") -> str:
    """The name the registry holds for the tenant's (or its project's) own namespace of this
    purpose on this cluster; "" when none is claimed (the plan then uses the usual name)."""
    if purpose == NamePurpose.KARGO and not app:
        return ""
    return _read_once(
        ("claimed", cluster.pk, tenant.pk, purpose, app),
        lambda: (
            (
                NamespaceClaim.objects.filter(
                    cluster=cluster, tenant=tenant, purpose=purpose, app=app
                )
                .order_by("released_at", "-pk")
                .values_list("name", flat=True)
                .first()
            )
            or ""
        ),
    )


def claims_of(inputs: PlanInput, cluster: Cluster) -> dict[str, ClaimSpec]:
    """What the registry says of every namespace name the plan of `inputs` touches."""
    wanted = {ns.name for ns in inputs.namespaces} | set(inputs.remove_namespaces)
    wanted |= {
        inputs.tenant.apps_namespace,
        inputs.tenant.gitops_namespace,
        inputs.cluster.argocd_namespace,
    }
    wanted |= {project.namespace for project in (*inputs.kargo_projects, *inputs.remove_kargo)}
    if inputs.kargo_namespace:
        wanted.add(inputs.kargo_namespace)
    wanted.discard("")
    known = _claims_known(cluster.pk)
    _read_claims(cluster.pk, wanted - known.keys(), known)
    return {name: known[name] for name in sorted(wanted) if known[name] is not None}


def _claims_known(cluster_id: int) -> dict[str, ClaimSpec | None]:
    """Name -> its live claim (None: unclaimed) on the cluster, as read so far: shared by a
    batch's plans (`shared_reads`), else each plan's own."""
    return _read_once(("claims", cluster_id), dict)


def _read_claims(cluster_id: int, names: set[str], into: dict[str, ClaimSpec | None]) -> None:
    if not names:
        return
    into.update(dict.fromkeys(names))
    for claim in NamespaceClaim.objects.filter(
        cluster_id=cluster_id, name__in=names, released_at__isnull=True
    ).select_related("tenant"):
        into[claim.name] = ClaimSpec(
            purpose=claim.purpose, tenant=claim.tenant.slug if claim.tenant else "", app=claim.app
        )


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


def prefetch(requests: list[Request]) -> None:
    """Within `shared_reads`: the names recorded for these requests, and the registry's
    claims on them, in a query each for all of them (else one each per plan)."""
    recorded: dict[int, dict[int, str]] = {r.pk: {} for r in requests}
    names: dict[int, set[str]] = {}
    for request_id, tier_id, name, cluster_id in (
        Namespace.objects.filter(request__in=requests)
        .order_by("pk")
        .values_list("request_id", "tier_id", "name", "cluster_id")
    ):
        recorded[request_id][tier_id] = name
        names.setdefault(cluster_id, set()).add(name)
    for request_id, by_tier in recorded.items():
        _read_once(("recorded", request_id), lambda by_tier=by_tier: by_tier)
    for cluster_id, wanted in names.items():
        _read_claims(cluster_id, wanted, _claims_known(cluster_id))


def environment_takes_namespace(environment: EphemeralEnvironment) -> bool:
    """An ending environment deletes its namespace if it was made for it and no other
    environment still lives there."""
    if not environment.owns_namespace:
        return False
    others = environment.namespace.ephemeral_environments.exclude(pk=environment.pk).exclude(
        state=EnvironmentState.ENDED
    )
    return not others.exists()


def namespace_spec(
    namespace: Namespace,
    *,
    project: str | None = None,
    environment: str = "",
    engine: str = "",
    current: bool = False,
) -> NamespaceSpec:
    """A namespace as Berth's records describe it now (after any quota changes), with the
    tier definition it runs; `current`: with its tier as it stands (what an upgrade
    campaign would roll out)."""
    if project is None:
        project = namespace.project.name if namespace.project_id else ""
    return NamespaceSpec(
        name=namespace.name,
        tier=tier_spec(namespace.tier) if current else pinned_tier_spec(namespace),
        cpu_millis=namespace.cpu_millis,
        memory_mib=namespace.memory_mib,
        storage_gib=namespace.storage_gib,
        project=project,
        environment=environment,
        cluster=namespace.cluster.name,
        engine=engine,
    )


def namespace_input(namespace: Namespace, *, current: bool = False) -> PlanInput:
    """A live namespace as Berth's records describe it now (after any quota changes), with
    the tier definition it runs (drift is measured against that), or with its tier as it
    stands (`current`: what an upgrade campaign would apply)."""
    project = namespace.project
    return PlanInput(
        request_id=namespace.request_id or 0,
        tenant=tenant_spec(namespace.tenant, namespace.cluster),
        cluster=cluster_spec(namespace.cluster),
        engine=project.gitops_engine if project else namespace.tenant.gitops_engine,
        namespaces=(namespace_spec(namespace, current=current),),
    )


# --- GitOps ------------------------------------------------------------------------------

GITOPS_LIVE_STATES = (NamespaceState.PENDING, NamespaceState.ACTIVE)


def app_of(namespace: Namespace) -> str:
    """The application a namespace deploys: its project, else the app its request named."""
    if namespace.project_id:
        return namespace.project.name
    payload = namespace.request.payload if namespace.request_id else {}
    return payload.get("app") or payload.get("project") or ""


def apps_of_request(tenancy_request: Request, inputs: PlanInput) -> list[str]:
    """The applications whose GitOps files a request changes: one, or for a tenant leaving
    a cluster every application it had there, or none (the tenant's own objects)."""
    if tenancy_request.kind == RequestKind.TENANT_SYNC:
        # Every application living on the cluster: its files follow the records too (a
        # changed repository, a file deleted by hand), which makes a sync the repair.
        return apps_on(tenancy_request.tenant, inputs.cluster.name)
    if tenancy_request.kind == RequestKind.TENANT_DECOMMISSION:
        going = Namespace.objects.filter(
            tenant=tenancy_request.tenant,
            cluster__name=inputs.cluster.name,
            name__in=inputs.remove_namespaces,
        ).select_related("project", "request")
        return sorted({app for app in map(app_of, going) if app})
    app = _app_of_request(tenancy_request, inputs)
    return [app] if app else []


def apps_on(tenant: Tenant, cluster: str) -> list[str]:
    """The applications with a live namespace of the tenant on the cluster (review apps'
    namespaces included: their files live under their project)."""
    live = Namespace.objects.filter(
        tenant=tenant, cluster__name=cluster, state__in=GITOPS_LIVE_STATES
    ).select_related("project", "request")
    return sorted({app for app in map(app_of, live) if app})


def _app_of_request(tenancy_request: Request, inputs: PlanInput) -> str:
    payload = tenancy_request.payload
    if tenancy_request.kind in (RequestKind.NAMESPACE, RequestKind.PROJECT):
        return payload["app"]
    if tenancy_request.kind in (
        RequestKind.ENVIRONMENT,
        RequestKind.EPHEMERAL,
        RequestKind.END_ENVIRONMENT,
        RequestKind.PROJECT_DECOMMISSION,
    ):
        return payload["project"]
    namespace = (
        Namespace.objects.select_related("project", "request")
        .filter(
            tenant=tenancy_request.tenant,
            name=payload["namespace"],
            cluster__name=inputs.cluster.name,
        )
        .order_by("-pk")
        .first()
    )
    return app_of(namespace) if namespace else ""


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
        app = _app_of_request(tenancy_request, inputs)
    project = Project.objects.filter(tenant=tenant, name=app).first() if app else None
    if project is not None:
        engine, project_name = project.gitops_engine, project.name
    elif tenancy_request.kind == RequestKind.PROJECT:
        engine = tenancy_request.payload.get("engine") or tenant.gitops_engine
        project_name = app
    else:
        engine, project_name = tenant.gitops_engine, ""

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
        .exclude(request__kind=RequestKind.EPHEMERAL)
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
        else _claimed_name(
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
    if tenancy_request.kind == RequestKind.END_ENVIRONMENT:
        query = query.exclude(pk=tenancy_request.payload["environment"])
    return list(
        query.exclude(
            namespace__cluster__name=inputs.cluster.name,
            namespace__name__in=inputs.remove_namespaces,
        )
        .select_related("namespace__tier", "namespace__tier_revision", "namespace__cluster")
        .order_by("slug")
    )
