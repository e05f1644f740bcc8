"""The one door into clusters and repositories (docs/architecture.md, "Keys, the queue and
the reconcile"). A namespace on a cluster, a tenant on a cluster and a tenant's repository
are the keys of desired state; every source of change (an approval, a merge, a campaign's
wave, a watch event, beat's sweep, Repair, a deploy token) enqueues keys or reconciles them
here, and only here are the cluster writer and the repository writer called (a test holds
this: tests/project/test_one_door.py).

    keys       the keys, and the keys a request's plan changes
    queue      the keyed queue: one row per key, claimed by one worker, backoff
    door       enqueue, run now, drain; the reconcile of a key by its kind
    namespace  the reconcile of a namespace key: render, compare, apply, audit, conditions
    gates      every check before a change: guardrails by content, the merge gate
    runs       carrying out an approved request: its keys held, plan, checks, apply, GitOps
    batches    which requests a worker carries out together
    approvals  what an approval is bound to, and what it would bind to now
    applying   a batch's plans applied to a cluster, wave by wave; removals deleted
    outages    a cluster or repository that does not answer: wait, then give up
    decommissions  the requests whose namespaces a run removes
    git_step   the GitOps step of a run, its outcome noted in the run
    commits    one commit per request, pushed together per repository, recorded
    proposals  what a request's commit would change; its preview before approval
    pull_requests  merge-request mode: the branch, the pull request, the merge gate
    guardrails the guardrails a cluster should hold, verified by content
    deploy_tokens  a deploy token's ServiceAccount and binding, through its namespace's key
"""

from provisioning.reconcile.applying import apply_object
from provisioning.reconcile.approvals import approved_digest
from provisioning.reconcile.batches import batches_of
from provisioning.reconcile.commits import GitOpsWritten, write_gitops, write_gitops_all
from provisioning.reconcile.door import active_namespaces, sweep_namespace
from provisioning.reconcile.proposals import gitops_preview
from provisioning.reconcile.runs import converge, converge_batch, current_plan

__all__ = [
    "GitOpsWritten",
    "active_namespaces",
    "apply_object",
    "approved_digest",
    "batches_of",
    "converge",
    "converge_batch",
    "current_plan",
    "gitops_preview",
    "sweep_namespace",
    "write_gitops",
    "write_gitops_all",
]
