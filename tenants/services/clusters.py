"""Clusters Berth provisions into, added and changed by platform admins."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from tenants import audit, selectors
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import Cluster, User
from tenants.services.editing import apply_changes, full_clean
from tenants.services.names import NameTaken, claim_platform_namespaces
from tenants.signals import cluster_registered


def save_cluster(
    *,
    actor: User,
    cluster: Cluster | None,
    values: dict[str, Any],
    source_ip: str | None = None,
) -> Cluster:
    """Add a cluster (`cluster` None) or change one; credentials are encrypted at rest."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may add or change clusters.")
    with transaction.atomic():
        if cluster is None:
            target, action = Cluster(), "cluster.create"
        else:
            target = Cluster.objects.select_for_update().get(pk=cluster.pk)
            action = "cluster.update"
        before, after = apply_changes(target, values)
        full_clean(target)
        target.save()
        register_platform_namespaces(target)
        if action == "cluster.create" or "api_url" in after:
            cluster_id = target.pk
            transaction.on_commit(
                lambda: cluster_registered.send(sender=Cluster, cluster_id=cluster_id)
            )
        if after or action == "cluster.create":
            audit.record(
                actor=actor,
                action=action,
                obj=target,
                before=before if cluster is not None else None,
                after=after,
                source_ip=source_ip,
            )
    return target


def register_platform_namespaces(cluster: Cluster) -> list[str]:
    """Claim the cluster's platform namespaces (kube-*, default, its Argo CD, Kargo, Flux
    and ingress namespaces, Berth's); a setting that names a tenant's namespace is refused
    on its field."""
    try:
        return claim_platform_namespaces(cluster)
    except NameTaken as exc:
        field = next(
            (
                f
                for f in ("argocd_namespace", "ingress_namespace")
                if getattr(cluster, f) and f"{getattr(cluster, f)} " in f"{exc} "
            ),
            "non_field_errors",
        )
        raise InvalidInput.of({field: [str(exc)]}) from exc
