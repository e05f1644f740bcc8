"""What Berth's last apply left on each object (its resourceVersion): a later apply that
finds the same version skips the call."""

from __future__ import annotations

from django.utils import timezone

from provisioning.models import AppliedObject
from tenants.models import (
    Cluster,
)


def applied_versions(
    *, cluster: Cluster, refs: list[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """(apiVersion, object) → the resourceVersion Berth's last apply left, for these refs."""
    # Both columns of the unique index: found by it, not by reading the cluster's every row.
    rows = AppliedObject.objects.filter(
        cluster=cluster,
        api_version__in={api_version for api_version, _ in refs},
        object__in={ref for _, ref in refs},
    ).values_list("api_version", "object", "resource_version")
    return {(api_version, ref): version for api_version, ref, version in rows}


def remember_versions(*, cluster: Cluster, versions: dict[tuple[str, str], str]) -> None:
    """What each apply left, in one statement."""
    if not versions:
        return
    now = timezone.now()
    AppliedObject.objects.bulk_create(
        [
            AppliedObject(
                cluster=cluster,
                api_version=api_version,
                object=ref,
                resource_version=version,
                applied_at=now,
            )
            for (api_version, ref), version in versions.items()
        ],
        update_conflicts=True,
        unique_fields=["cluster", "api_version", "object"],
        update_fields=["resource_version", "applied_at"],
    )


def forget_versions(*, cluster: Cluster, refs: list[str]) -> None:
    AppliedObject.objects.filter(cluster=cluster, object__in=refs).delete()
