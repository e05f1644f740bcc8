"""The namespace registry, written (tenants.models.NamespaceClaim): a name is claimed in the
transaction that computes it, with one purpose and one owner, and released when what it
names is refused or gone. A name that belongs to something else is refused, saying what."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from tenants.choices import NamePurpose
from tenants.errors import DomainError
from tenants.models import Cluster, Namespace, NamespaceClaim, Request, Tenant
from tenants.name_registry import claim_of, claim_problem, live_claims, name_problem
from tenants.naming import CLUSTER_NAMESPACES, argocd_apps_namespace, gitops_namespace

# Tenant-level names outlive any one request: the tenant's Argo CD applications namespace
# serves every Argo CD project of the tenant, so refusing one request does not free it.
TENANT_LEVEL = frozenset({NamePurpose.ARGOCD_APPS})


class NameTaken(DomainError):
    """The name belongs to something else (its owner named as the asker may know it)."""


def claim(
    *,
    cluster: Cluster,
    name: str,
    purpose: str,
    tenant: Tenant | None = None,
    app: str = "",
    tier: str = "",
    environment: str = "",
    request: Request | None = None,
    namespace: Namespace | None = None,
) -> NamespaceClaim:
    """Take `name` on `cluster` for this purpose and owner, or raise NameTaken. Taking a
    shareable name its owner already holds (the tenant's applications namespace, a shared
    environment namespace) returns the claim there is."""
    owner = {
        "purpose": purpose,
        "tenant": tenant,
        "app": app,
        "tier": tier,
        "environment": environment,
    }
    existing = claim_of(cluster, name)
    problem = claim_problem(existing, cluster, name, **owner)
    if problem:
        raise NameTaken(problem)
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return NamespaceClaim.objects.create(
                cluster=cluster, name=name, request=request, namespace=namespace, **owner
            )
    except IntegrityError as exc:
        # Claimed by a concurrent transaction between the check and the insert.
        raise NameTaken(
            name_problem(cluster, name, **owner) or f"{name} was just claimed by another request."
        ) from exc


def release(claims: QuerySet[NamespaceClaim]) -> list[str]:
    """Free these names; returns them."""
    names = list(claims.filter(released_at__isnull=True).values_list("name", flat=True))
    claims.filter(released_at__isnull=True).update(released_at=timezone.now())
    return names


def release_refused(tenancy_request: Request) -> list[str]:
    """A request was rejected or cancelled: the names it claimed are free again, but for
    the tenant-level ones. (A request that joined a shared namespace claimed nothing: the
    claim is the request's that created it.)"""
    return release(live_claims().filter(request=tenancy_request).exclude(purpose__in=TENANT_LEVEL))


def release_namespaces(namespaces: QuerySet[Namespace]) -> list[str]:
    """These namespaces are gone (decommissioned): their names are free again."""
    return release(live_claims().filter(namespace__in=namespaces))


def tenant_names(slug: str) -> dict[str, str]:
    """The names a tenant holds on every cluster it may use, with their purposes: its Argo
    CD applications namespace and its Flux GitOps namespace."""
    return {
        argocd_apps_namespace(slug): NamePurpose.ARGOCD_APPS,
        gitops_namespace(slug): NamePurpose.GITOPS,
    }


def claim_tenant_names(tenant: Tenant, cluster: Cluster) -> None:
    """Claim the tenant's own names on a cluster it may use, whatever it asks for.
    Idempotent."""
    for name, purpose in tenant_names(tenant.slug).items():
        claim(cluster=cluster, name=name, purpose=purpose, tenant=tenant)


def claim_found_namespaces(
    cluster: Cluster, found: Sequence[str], *, labelled_berths: Sequence[str] = ()
) -> list[str]:
    """Claim the namespaces found on a cluster that the registry does not know yet: they
    were there before Berth (or made beside it) and are nobody's to be given.

    Those labelled as Berth's (`labelled_berths`) are left to the claims that made them,
    live or released (one being deleted); a label is anyone's to set, so one whose name
    the registry never held (another Berth's, or a forgery) is claimed as found too: no
    tenant's prefix may take it over (docs/naming.md)."""
    known = set(
        NamespaceClaim.objects.filter(cluster=cluster, name__in=labelled_berths).values_list(
            "name", flat=True
        )
    )
    claimed = []
    for name in sorted({*found, *(name for name in labelled_berths if name not in known)}):
        if claim_of(cluster, name) is None:
            claim(cluster=cluster, name=name, purpose=NamePurpose.FOUND)
            claimed.append(name)
    return claimed


def platform_namespaces(cluster: Cluster) -> list[str]:
    names = [
        *CLUSTER_NAMESPACES,
        cluster.argocd_namespace,
        cluster.ingress_namespace,
        settings.BERTH_NAMESPACE,
    ]
    return list(dict.fromkeys(name for name in names if name))


def claim_platform_namespaces(cluster: Cluster) -> list[str]:
    """Claim the namespaces a cluster's platform runs in (kube-*, default, Argo CD, Kargo,
    Flux, the ingress controller) and Berth's own; idempotent. Raises NameTaken when one
    is already a tenant's (a cluster setting naming a tenant namespace).

    Every cluster save registers them again, so the claims are read in one query and the
    missing ones written in one insert."""
    names = platform_namespaces(cluster)
    held = {
        claim.name: claim
        for claim in live_claims()
        .filter(cluster=cluster, name__in=names)
        .select_related("tenant", "namespace", "cluster")
    }
    missing = []
    for name in names:
        purpose = _platform_purpose(name)
        problem = claim_problem(held.get(name), cluster, name, purpose=purpose, tenant=None)
        if problem:
            raise NameTaken(problem)
        if name not in held:
            missing.append(NamespaceClaim(cluster=cluster, name=name, purpose=purpose))
    if not missing:
        return names
    try:
        with transaction.atomic():
            NamespaceClaim.objects.bulk_create(missing)
    except IntegrityError:
        # One was claimed by a concurrent transaction: claimed one by one, which says by what.
        for name in names:
            claim(cluster=cluster, name=name, purpose=_platform_purpose(name))
    return names


def _platform_purpose(name: str) -> str:
    return NamePurpose.BERTH if name == settings.BERTH_NAMESPACE else NamePurpose.PLATFORM
