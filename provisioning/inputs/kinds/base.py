"""What the engine knows of every request kind: what its request brings to a plan input
(`draft`), which applications' GitOps files it changes, what its run does after."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from provisioning.inputs.specs import app_of, kargo_projects_for
from provisioning.plan import GrantSpec, KargoProject, NamespaceSpec, PlanInput, TierSpec
from tenants.choices import RequestKind
from tenants.models import Cluster, Namespace, Request, Tenant


@dataclass
class Draft:
    """What a request of a kind brings to its plan input; the rest (the tenant, the
    cluster's own settings, the claimed names) every plan reads alike."""

    cluster: Cluster
    engine: str
    project: str = ""
    namespaces: list[NamespaceSpec] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kargo: tuple[KargoProject, ...] = ()
    remove_kargo: tuple[KargoProject, ...] = ()
    remove_engines: frozenset[str] = frozenset()
    grants: tuple[GrantSpec, ...] = ()


def project_draft(
    tenant: Tenant, cluster: Cluster, engine: str, project: str, namespaces: list[NamespaceSpec]
) -> Draft:
    """New namespaces of a project, with its Kargo side (which promotes across its tiers)."""
    return Draft(
        cluster=cluster,
        engine=engine,
        project=project,
        namespaces=namespaces,
        kargo=kargo_projects_for(tenant, cluster, engine, project, namespaces),
    )


def sized_namespace(
    payload: dict[str, Any], *, name: str, tier: TierSpec, project: str = ""
) -> NamespaceSpec:
    """A namespace of the size the request's payload asks (storage it may leave out)."""
    return NamespaceSpec(
        name=name,
        tier=tier,
        cpu_millis=payload["cpu_millis"],
        memory_mib=payload["memory_mib"],
        storage_gib=payload.get("storage_gib", 0),
        project=project,
    )


class PlanKind:
    value: ClassVar[RequestKind]
    # Gives the tenant (or a project) a home on a cluster: the plan applies the tenant's
    # own objects there too (its roots, AppProject, credentials).
    applies_tenant_objects: ClassVar[bool] = False
    # Makes a namespace or removes one without applying the tenant's roots: the plan
    # applies the tenant's AppProject, whose destinations name its namespaces.
    changes_namespaces: ClassVar[bool] = False
    # Only creates: a worker taking one approved takes others approved for the same
    # cluster with it. Removals and the rest go one at a time.
    batched: ClassVar[bool] = False
    # Changes GitOps files (a quota is Berth's alone: nothing in the repository needs it).
    writes_repository: ClassVar[bool] = True
    # Made exactly one namespace (or environment): its namespace's decommission ends it.
    follows_its_namespace: ClassVar[bool] = False
    # Its GitOps commit touches only the namespace its payload names (an environment's).
    owns_payload_namespace: ClassVar[bool] = False

    def draft(self, tenancy_request: Request) -> Draft:
        raise NotImplementedError

    def app(self, tenancy_request: Request, inputs: PlanInput) -> str:
        """The application whose GitOps files it changes: by default the one deploying
        the namespace its payload names."""
        namespace = (
            Namespace.objects.select_related("project", "request")
            .filter(
                tenant=tenancy_request.tenant,
                name=tenancy_request.payload["namespace"],
                cluster__name=inputs.cluster.name,
            )
            .order_by("-pk")
            .first()
        )
        return app_of(namespace) if namespace else ""

    def gitops_apps(self, tenancy_request: Request, inputs: PlanInput) -> list[str]:
        """The applications whose GitOps files it changes: one, or none."""
        app = self.app(tenancy_request, inputs)
        return [app] if app else []

    def unrecorded_project(self, tenancy_request: Request, app: str) -> tuple[str, str]:
        """(engine, project) of an application with no project recorded (yet)."""
        return tenancy_request.tenant.gitops_engine, ""

    def ending_environment(self, payload: dict[str, Any]) -> int | None:
        """The ephemeral environment it ends (its files go with it)."""
        return None

    def retires_tenant(self, payload: dict[str, Any]) -> bool:
        return False


class PayloadApp(PlanKind):
    """A kind whose payload names its application (`app_key`)."""

    app_key: ClassVar[str] = "project"

    def app(self, tenancy_request: Request, inputs: PlanInput) -> str:
        return tenancy_request.payload[self.app_key]
