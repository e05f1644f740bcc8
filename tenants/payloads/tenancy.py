"""Requests about a tenant's or a project's whole footprint on a cluster: applying the
tenant's own objects again (after a change to the tenant), and decommissioning a project or
the tenant there.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.choices import EnvironmentState, NamespaceState
from tenants.models import Cluster, EphemeralEnvironment, Namespace, Project
from tenants.payloads.base import TenantScoped

LIVE = (NamespaceState.PENDING, NamespaceState.ACTIVE)


class ClusterScoped(TenantScoped):
    cluster = serializers.SlugField()

    def _used_cluster(self, name: str) -> Cluster:
        """A cluster the tenant may use or still has namespaces on."""
        cluster = Cluster.objects.filter(name=name).first()
        used = cluster is not None and (
            self.tenant.allowed_clusters.filter(pk=cluster.pk).exists()
            or Namespace.objects.filter(
                tenant=self.tenant, cluster=cluster, state__in=LIVE
            ).exists()
        )
        if not used:
            raise serializers.ValidationError(
                {"cluster": f"The tenant has nothing on a cluster {name!r}."}
            )
        return cluster

    def _no_live_environments(self, environments) -> None:
        live = environments.exclude(state=EnvironmentState.ENDED)
        if live.exists():
            slugs = ", ".join(sorted(live.values_list("slug", flat=True))[:5])
            raise serializers.ValidationError(
                {"cluster": (f"Ephemeral environments still run there ({slugs}): end them first.")}
            )


class TenantSyncPayload(ClusterScoped):
    """Apply the tenant's objects on a cluster as the tenant's records now say (groups,
    domains, repository and credential): its roots, AppProject, credentials, Kargo roles
    and every namespace's bundle. Berth asks for it after each change to the tenant."""

    reason = serializers.CharField(max_length=500, required=False, allow_blank=True)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        self._used_cluster(data["cluster"])
        return data


class ProjectDecommissionPayload(ClusterScoped):
    project = serializers.SlugField(max_length=63)
    reason = serializers.CharField(max_length=500)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        cluster = self._used_cluster(data["cluster"])
        project = Project.objects.filter(tenant=self.tenant, name=data["project"]).first()
        if project is None:
            raise serializers.ValidationError(
                {"project": f"{data['project']!r} is not a project of this tenant."}
            )
        if not Namespace.objects.filter(project=project, cluster=cluster, state__in=LIVE).exists():
            raise serializers.ValidationError(
                {"project": f"{project.name} has no namespace on {cluster.name}."}
            )
        self._no_live_environments(
            EphemeralEnvironment.objects.filter(project=project, namespace__cluster=cluster)
        )
        return data


class TenantDecommissionPayload(ClusterScoped):
    reason = serializers.CharField(max_length=500)
    retire = serializers.BooleanField(
        default=False,
        help_text="Retire the tenant once this cluster is cleaned: it must be "
        "the tenant's last cluster. A retired tenant takes no request and leaves its members' "
        "lists; its records and audit trail stay.",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        cluster = self._used_cluster(data["cluster"])
        self._no_live_environments(
            EphemeralEnvironment.objects.filter(tenant=self.tenant, namespace__cluster=cluster)
        )
        if data.get("retire"):
            elsewhere = sorted(
                set(
                    Namespace.objects.filter(tenant=self.tenant, state__in=LIVE)
                    .exclude(cluster=cluster)
                    .values_list("cluster__name", flat=True)
                )
            )
            if elsewhere:
                raise serializers.ValidationError(
                    {
                        "retire": (
                            f"{self.tenant.slug} still has namespaces on {', '.join(elsewhere)}: "
                            "decommission it there first; the last cluster's decommission retires "
                            "it."
                        )
                    }
                )
        return data
