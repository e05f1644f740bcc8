"""What several plans read alike, read once (`shared_reads`), and the name registry as
a plan sees it: the names recorded for a request, the names claimed for a tenant."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from provisioning.plan import (
    ClaimSpec,
    PlanInput,
)
from tenants.choices import (
    NamePurpose,
)
from tenants.models import (
    Cluster,
    EnvironmentTier,
    Namespace,
    NamespaceClaim,
    Request,
    Tenant,
)
from tenants.naming import namespace_name

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


def read_once(key: Hashable, read: Callable[[], T]) -> T:
    cache = _shared.get()
    if cache is None:
        return read()
    if key not in cache:
        cache[key] = read()
    return cache[key]  # type: ignore[return-value]


def cluster_named(name: str) -> Cluster:
    return read_once(("cluster", name), lambda: Cluster.objects.get(name=name))


def tier_named(slug: str) -> EnvironmentTier:
    return read_once(("tier", slug), lambda: EnvironmentTier.objects.get(slug=slug))


def recorded_name(tenancy_request: Request, app: str, tier: EnvironmentTier) -> str:
    """The name claimed for this request's namespace in this tier when it was submitted
    (names are computed once and recorded, never recomputed)."""
    recorded = recorded_names(tenancy_request, [tier]).get(tier.pk)
    return recorded or namespace_name(tenancy_request.tenant.slug, app, tier.slug)


def recorded_names(tenancy_request: Request, tiers: list[EnvironmentTier]) -> dict[int, str]:
    """tier id → the name recorded for this request's namespace in it, in one query (the
    latest row where a tier has several)."""
    recorded = read_once(
        ("recorded", tenancy_request.pk),
        lambda: dict(
            Namespace.objects.filter(request=tenancy_request)
            .order_by("pk")
            .values_list("tier_id", "name")
        ),
    )
    return {tier.pk: recorded[tier.pk] for tier in tiers if tier.pk in recorded}


def claimed_name(cluster: Cluster, tenant: Tenant, purpose: str, *, app: str = "") -> str:
    """The name the registry holds for the tenant's (or its project's) own namespace of this
    purpose on this cluster; "" when none is claimed (the plan then uses the usual name)."""
    if purpose == NamePurpose.KARGO and not app:
        return ""
    return read_once(
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
    wanted |= {grant.namespace for grant in inputs.grants}
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
    return read_once(("claims", cluster_id), dict)


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
        read_once(("recorded", request_id), lambda by_tier=by_tier: by_tier)
    for cluster_id, wanted in names.items():
        _read_claims(cluster_id, wanted, _claims_known(cluster_id))
