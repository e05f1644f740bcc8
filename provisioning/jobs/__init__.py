"""What drives and observes the door (provisioning.reconcile) from outside: campaigns move
keys' pins wave by wave, the watcher and beat's sweep find drift and queue the keys that
have it, discovery claims what a new cluster holds, the truth table compares records,
repository and cluster. None of them writes to a cluster or a repository itself.

    discovery the namespaces already on a cluster, claimed so none is given away; whether
              kube-green is there
    truth     database, repository and cluster compared, object by object (truth_rows: its
              states, its rows, the rows a healthy watcher answers)
    watch     the cluster watcher (watch_streams: its streams, watch_lock: one per cluster,
              watch_supervisor: a watcher per cluster in one process)
    campaigns upgrade campaigns: their changes planned, their waves driven through the keys
"""

from provisioning.jobs.discovery import discover_hibernation, discover_namespaces
from provisioning.jobs.truth import take as take_truth
from provisioning.kube import cluster_access, cluster_client, retry_policy
from provisioning.reconcile import active_namespaces, sweep_namespace

__all__ = [
    "active_namespaces",
    "cluster_access",
    "cluster_client",
    "discover_hibernation",
    "discover_namespaces",
    "retry_policy",
    "sweep_namespace",
    "take_truth",
]
