"""The reconciler: converge a cluster (and the tenant's repository) to an approved plan, and
find drift afterwards.

    runs      a request's run: lease, plan, check, apply, then the GitOps step
    batches   which requests a worker provisions together
    approvals what an approval is bound to, and what it would bind to now
    applying  a batch's plans applied to a cluster, wave by wave; removals deleted
    outages   a cluster or repository that does not answer: wait, then give up
    decommissions  the requests whose namespaces a run removes
    commits   the GitOps step: one commit per request, recorded; and its preview
    drift     what changed behind Berth's back, repaired where the tier says so
    discovery the namespaces already on a cluster, claimed so none is given away
    truth     database, repository and cluster compared, object by object
    clusters  how a job reaches a cluster
"""

from provisioning.jobs.applying import apply_object
from provisioning.jobs.approvals import approved_digest
from provisioning.jobs.batches import batches_of
from provisioning.jobs.clusters import cluster_access, cluster_client, retry_policy
from provisioning.jobs.commits import (
    GitOpsWritten,
    gitops_preview,
    write_gitops,
    write_gitops_all,
)
from provisioning.jobs.discovery import discover_namespaces
from provisioning.jobs.drift import active_namespaces, find_drift, reconcile_namespace
from provisioning.jobs.runs import converge, converge_batch, current_plan
from provisioning.jobs.truth import take as take_truth

__all__ = [
    "GitOpsWritten",
    "active_namespaces",
    "apply_object",
    "batches_of",
    "approved_digest",
    "cluster_access",
    "cluster_client",
    "converge",
    "converge_batch",
    "current_plan",
    "discover_namespaces",
    "find_drift",
    "gitops_preview",
    "reconcile_namespace",
    "retry_policy",
    "take_truth",
    "write_gitops",
    "write_gitops_all",
]
