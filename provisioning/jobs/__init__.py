"""What workers and beat run: converge a cluster (and the tenant's repository) to an approved
plan, find drift afterwards, roll out upgrade campaigns, install guardrails.

    runs      a request's run: lease, plan, check, apply, then the GitOps step
    batches   which requests a worker provisions together
    approvals what an approval is bound to, and what it would bind to now
    applying  a batch's plans applied to a cluster, wave by wave; removals deleted
    outages   a cluster or repository that does not answer: wait, then give up
    decommissions  the requests whose namespaces a run removes
    git_step  the GitOps step of a run, its outcome noted in the run
    commits   one commit per request, pushed together per repository, recorded
    proposals what a request's commit would change; its preview before approval
    drift     what changed behind Berth's back, repaired where the tier says so
    discovery the namespaces already on a cluster, claimed so none is given away
    truth     database, repository and cluster compared, object by object (truth_rows: its
              states, its rows, the rows a healthy watcher answers)
    watch     the cluster watcher (watch_streams: its streams, watch_lock: one per cluster,
              watch_supervisor: a watcher per cluster in one process)
    campaigns upgrade campaigns rolled out and back
    guardrails the roles and admission policies installed on a cluster, checked
"""

from provisioning.jobs.applying import apply_object
from provisioning.jobs.approvals import approved_digest
from provisioning.jobs.batches import batches_of
from provisioning.jobs.commits import GitOpsWritten, write_gitops, write_gitops_all
from provisioning.jobs.discovery import discover_namespaces
from provisioning.jobs.drift import active_namespaces, find_drift, reconcile_namespace
from provisioning.jobs.proposals import gitops_preview
from provisioning.jobs.runs import converge, converge_batch, current_plan
from provisioning.jobs.truth import take as take_truth
from provisioning.kube import cluster_access, cluster_client, retry_policy

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
