"""Berth's records as the plan describes them: tiers, tenants, clusters, namespaces,
Kargo projects, the engines a tenant runs; and the applications namespaces deploy."""

from __future__ import annotations

from dataclasses import replace

from django.db.models import Q

from provisioning import gitops
from provisioning.inputs.access import live_grants
from provisioning.inputs.reads import claimed_name, claims_of, read_once
from provisioning.inputs.sleep import sleep_spec
from provisioning.plan import (
    ClusterSpec,
    GrantSpec,
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
    RequestState,
)
from tenants.models import (
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    NamespaceClaim,
    Project,
    Request,
    Run,
    Tenant,
)
from tenants.naming import kargo_namespace

GITOPS_LIVE_STATES = (NamespaceState.PENDING, NamespaceState.ACTIVE)
MAKING = (RequestState.APPROVED, RequestState.PROVISIONING)


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
    return read_once(
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
        apps_namespace=(claimed_name(cluster, tenant, NamePurpose.ARGOCD_APPS) if cluster else ""),
        gitops_namespace=claimed_name(cluster, tenant, NamePurpose.GITOPS) if cluster else "",
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


def live_namespace(tenant: Tenant, name: str, *, removed_by: Request | None = None) -> Namespace:
    """The tenant's live namespace of that name; with `removed_by`, also while that request
    is decommissioning it (its run marked it so before its GitOps step: resuming after a
    wait, a Retry and the batch's commit writer render it again)."""
    states = [NamespaceState.ACTIVE, NamespaceState.PENDING]
    if removed_by is not None and name in namespaces_removed_by(removed_by):
        states.append(NamespaceState.DECOMMISSIONING)
    return Namespace.objects.select_related("tier", "tier_revision", "cluster", "project").get(
        tenant=tenant, name=name, state__in=states
    )


def namespaces_removed_by(tenancy_request: Request) -> set[str]:
    """The namespaces a run of this request set out to delete (its steps are laid out as it
    opens, before it marks them decommissioning): the ones it is decommissioning."""
    if tenancy_request.pk is None:
        return set()
    return {
        step["name"]
        for steps in Run.objects.filter(request_id=tenancy_request.pk).values_list(
            "steps", flat=True
        )
        for step in steps
        if step.get("kind") == "Namespace" and step.get("action") == "delete"
    }


def tenant_namespaces(tenant: Tenant, cluster: Cluster) -> tuple[str, ...]:
    """The tenant's namespaces on a cluster as the records hold them: live, or named by a
    request approved and about to make them (a batch's plans each name the others'), and
    its Argo CD + Kargo projects' Kargo namespaces there. One query, read once by the plans
    that share their reads (`shared_reads`)."""
    return read_once(("fenced", tenant.pk, cluster.pk), lambda: _tenant_namespaces(tenant, cluster))


def _tenant_namespaces(tenant: Tenant, cluster: Cluster) -> tuple[str, ...]:
    made = Q(state__in=GITOPS_LIVE_STATES) | Q(
        state=NamespaceState.REQUESTED, request__state__in=MAKING
    )
    rows = Namespace.objects.filter(made, tenant=tenant, cluster=cluster).order_by()
    names = rows.values_list("name", flat=True)
    if cluster.has_kargo:
        kargo_apps = rows.filter(project__gitops_engine=GitOpsEngine.ARGOCD_KARGO).values(
            "project__name"
        )
        kargo = (
            NamespaceClaim.objects.filter(
                Q(app__in=kargo_apps) | Q(request__state__in=MAKING),
                cluster=cluster,
                tenant=tenant,
                purpose=NamePurpose.KARGO,
                released_at__isnull=True,
            )
            .order_by()
            .values_list("name", flat=True)
        )
        names = names.union(kargo)
    return tuple(sorted(set(names)))


def fenced_tenant(tenant: Tenant, cluster: Cluster) -> TenantSpec:
    """The tenant as a plan that applies its AppProject sees it: with its namespaces."""
    return replace(tenant_spec(tenant, cluster), namespaces=tenant_namespaces(tenant, cluster))


def tenant_engines(tenant: Tenant, cluster: Cluster, *also: str) -> frozenset[str]:
    """The engines the tenant uses on a cluster: its default, those of its projects living
    there, and `also` (what the request brings)."""
    engines = {tenant.gitops_engine, *also}
    engines |= read_once(
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
    name = claimed_name(cluster, tenant, NamePurpose.KARGO, app=project)
    return KargoProject(
        name=project,
        namespace=name or kargo_namespace(tenant.slug, project),
        tiers=tuple(sorted(tiers.values(), key=lambda t: (t.position, t.slug))),
    )


def kargo_projects_for(
    tenant: Tenant, cluster: Cluster, engine: str, project: str, namespaces: list[NamespaceSpec]
) -> tuple[KargoProject, ...]:
    if engine != GitOpsEngine.ARGOCD_KARGO or not project or not cluster.has_kargo:
        return ()
    return (kargo_project(tenant, cluster, project, tuple(ns.tier for ns in namespaces)),)


def active_namespaces(
    tenant: Tenant, cluster: Cluster, *, removed_by: Request | None = None, **where: object
) -> list[Namespace]:
    """The tenant's active namespaces on a cluster; with `removed_by`, also those that
    request is decommissioning (see `live_namespace`)."""
    live = Q(state=NamespaceState.ACTIVE)
    if removed_by is not None:
        live |= Q(state=NamespaceState.DECOMMISSIONING, name__in=namespaces_removed_by(removed_by))
    return list(
        Namespace.objects.filter(live, tenant=tenant, cluster=cluster, **where)
        .select_related("tier", "tier_revision", "project", "request", "cluster")
        .order_by("name")
    )


def kept_on(
    tenant: Tenant, cluster: Cluster
) -> tuple[list[NamespaceSpec], tuple[KargoProject, ...]]:
    """The tenant's live namespaces on a cluster and its projects' Kargo side there."""
    live = active_namespaces(tenant, cluster)
    granted = live_grants(ns.pk for ns in live)
    namespaces = [
        namespace_spec(ns, engine=engine_of(ns, tenant), grants=granted.get(ns.pk, ()))
        for ns in live
    ]
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
    namespaces, kargo = kept_on(tenant, cluster)
    inputs = PlanInput(
        request_id=0,
        tenant=fenced_tenant(tenant, cluster),
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


def engine_of(namespace: Namespace, tenant: Tenant) -> str:
    return namespace.project.gitops_engine if namespace.project_id else tenant.gitops_engine


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
    grants: tuple[GrantSpec, ...] = (),
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
        grants=grants,
        sleep=sleep_spec(namespace),
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
        namespaces=(
            namespace_spec(
                namespace, current=current, grants=live_grants([namespace.pk]).get(namespace.pk, ())
            ),
        ),
    )


def app_of(namespace: Namespace) -> str:
    """The application a namespace deploys: its project, else the app its request named."""
    if namespace.project_id:
        return namespace.project.name
    payload = namespace.request.payload if namespace.request_id else {}
    return payload.get("app") or payload.get("project") or ""


def apps_on(tenant: Tenant, cluster: str) -> list[str]:
    """The applications with a live namespace of the tenant on the cluster (review apps'
    namespaces included: their files live under their project)."""
    live = Namespace.objects.filter(
        tenant=tenant, cluster__name=cluster, state__in=GITOPS_LIVE_STATES
    ).select_related("project", "request")
    return sorted({app for app in map(app_of, live) if app})
