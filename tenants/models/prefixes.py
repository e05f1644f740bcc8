"""A tenant's prefix, `<slug>-*`, and what it would reach.

A tenant's namespaces are named `<slug>-…`; its fences (the AppProject's destinations, the
RBAC of its Flux reconciler) name each of them (docs/naming.md, "A tenant owns exactly its
namespaces"). A slug is still refused when that prefix covers a namespace that is not the
tenant's, which would read as the tenant's: one every cluster keeps for the platform or Berth
(tenants.naming), or one the
registry holds for anyone else (the platform's, Berth's, one found on a cluster, another
tenant's). It sits beside the models because `Tenant.clean()` asks it, and so the REST API,
the onboarding form and the admin refuse alike; the Names page reports what a prefix came
to cover afterwards (tenants.selectors.names.prefix_overlaps).
"""

from __future__ import annotations

from django.conf import settings

from tenants.choices import NamePurpose
from tenants.models.names import NamespaceClaim
from tenants.naming import reserved_coverage

# Whose a covered name is, as told to whoever picks a slug (another tenant stays unnamed).
_OWNERS = {
    NamePurpose.PLATFORM: "which belongs to the platform",
    NamePurpose.BERTH: "which is Berth's own namespace",
    NamePurpose.FOUND: "which was on the cluster before Berth and is not Berth's to give",
}


def covered_owner(purpose: str) -> str:
    return _OWNERS.get(purpose, "which is another tenant's namespace")


def slug_coverage_problem(slug: str, *, tenant_id: int | None = None) -> str | None:
    """Why `<slug>-*` would reach a namespace that is not the tenant's (`tenant_id`; None: a
    tenant not saved yet), naming the first such namespace; None when the prefix is the
    tenant's alone. One query: the registry's live names under the prefix."""
    # What a registered cluster holds first: the message can name the cluster.
    claims = NamespaceClaim.objects.filter(released_at__isnull=True, name__startswith=f"{slug}-")
    if tenant_id is not None:
        claims = claims.exclude(tenant_id=tenant_id)
    covered = claims.select_related("cluster").order_by("name", "cluster__name").first()
    if covered is not None:
        return (
            f"{slug!r} would cover {covered.name} on cluster {covered.cluster.name}, "
            f"{covered_owner(covered.purpose)}."
        )
    return reserved_coverage(slug, berth_namespace=settings.BERTH_NAMESPACE)
