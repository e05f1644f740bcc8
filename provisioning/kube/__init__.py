"""Talking to clusters with the official Kubernetes client. I/O and nothing else.

client  the cluster client (server-side apply, merge patch, get, delete, list, watch)
errors  what a failed call means and whether it is retried
access  how Berth reaches a registered cluster: its access and retry policy from settings,
        and one cached client per cluster
"""

from provisioning.kube.access import client_for, cluster_access, cluster_client, retry_policy
from provisioning.kube.client import (
    FIELD_MANAGER,
    Applied,
    ClusterAccess,
    ClusterClient,
    Outcome,
)
from provisioning.kube.errors import KubeError, RetryPolicy

__all__ = [
    "FIELD_MANAGER",
    "Applied",
    "ClusterAccess",
    "ClusterClient",
    "KubeError",
    "Outcome",
    "RetryPolicy",
    "client_for",
    "cluster_access",
    "cluster_client",
    "retry_policy",
]
