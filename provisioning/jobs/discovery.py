"""The namespaces already on a cluster: claimed in the registry when the cluster is
registered (or on an admin's demand), so Berth never hands a tenant a namespace it did not
make, nor lets a tenant's prefix cover one. Its own (labelled as Berth's, and known to the
registry) are left to the claims that made them."""

from __future__ import annotations

from provisioning.kube import cluster_client
from provisioning.plan import MANAGED_BY
from provisioning.plan.sleep import SLEEP_INFO_KIND
from provisioning.records import sleep
from tenants.models import Cluster
from tenants.services.names import claim_found_namespaces


def discover_namespaces(cluster: Cluster) -> list[str]:
    """Claim every namespace on the cluster the registry does not know; returns them.
    Raises provisioning.kube.KubeError when the cluster cannot be read."""
    if cluster.plan_only:
        return []
    found: list[str] = []
    labelled_berths: list[str] = []
    for item in cluster_client(cluster).list("v1", "Namespace"):
        ours = (item["metadata"].get("labels") or {}).get(MANAGED_BY) == "berth"
        (labelled_berths if ours else found).append(item["metadata"]["name"])
    return claim_found_namespaces(cluster, found, labelled_berths=labelled_berths)


def discover_hibernation(cluster: Cluster) -> bool:
    """Whether kube-green's SleepInfo is served on the cluster, recorded (its namespaces'
    sleep goes to kube-green, or back to Berth, from their next reconcile on). Raises
    provisioning.kube.KubeError when the cluster cannot be read."""
    if cluster.plan_only:
        return cluster.has_kube_green
    found = cluster_client(cluster).serves(*SLEEP_INFO_KIND, fresh=True)
    sleep.record_kube_green(cluster, found)
    return found
