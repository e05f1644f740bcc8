"""The reconciler: converge a cluster to an approved plan.

Idempotent and safe to re-run at any time: the database says what was approved, the plan
says what that means, and server-side apply makes the cluster match. A worker holds a
lease on the request while it works, so two workers never provision the same request.
Once the cluster matches, the tenant's GitOps repository is brought in step in one commit
(`commits.write_gitops`): the last step of every run.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from provisioning import gitops
from provisioning.gitops import GitError
from provisioning.inputs import plan_input_for, plan_inputs_for, shared_reads
from provisioning.inputs.kinds import plan_kind_for
from provisioning.kube import KubeError, cluster_client
from provisioning.plan import Plan, PlanInput, ref_of, render
from provisioning.reconcile import queue, run_ends
from provisioning.reconcile.applying import apply_plans, delete_plan
from provisioning.reconcile.approvals import Bound, approved_digests, gitops_binds_now
from provisioning.reconcile.batches import BATCHED_KINDS, Item
from provisioning.reconcile.commits import writes_a_repository
from provisioning.reconcile.decommissions import creators_of, finish_decommission_of, start_removals
from provisioning.reconcile.gates import cluster_gate
from provisioning.reconcile.git_step import GitFailure, gitops_step, gitops_step_row, gitops_steps
from provisioning.reconcile.keys import Key, namespace_keys
from provisioning.reconcile.outages import wait_for_outage
from provisioning.reconcile.pull_requests import propose_first
from provisioning.reconcile.queue import Cause
from provisioning.records import leases, outcomes, run_steps
from provisioning.validation import validate_plan
from tenants import services
from tenants.choices import RequestState, RunState
from tenants.conditions import Outcome, Reason, busy, idle, ready, returned
from tenants.models import Cluster, Request
from tenants.selectors import approval_digest

logger = logging.getLogger(__name__)


def current_plan(tenancy_request: Request) -> Plan:
    return render(plan_input_for(tenancy_request))


def converge(*, request_id: int, worker: str) -> Outcome:
    """Bring one request's objects into the cluster. Returns what happened, for logs."""
    return converge_batch(request_id=request_id, worker=worker)[request_id]


def converge_batch(
    *, request_id: int, worker: str, companions: tuple[int, ...] = ()
) -> dict[int, Outcome]:
    """Provision the request and, when it is an approved one that only creates, up to
    BERTH_PROVISION_BATCH_MAX - 1 others approved for the same cluster that no worker holds
    (`companions` first: the job was queued for them too): one lease, one transition, one
    apply phase and one GitOps push for them all, while each keeps its own run, audit events
    and outcome. A job answers for every request it was queued for: when the first is taken
    or done, the next one leads. Returns what happened to each."""
    results: dict[int, Outcome] = {}
    queued = [request_id, *companions]
    while queued:
        taken = _converge_led_by(queued[0], worker=worker, companions=tuple(queued[1:]))
        results.update(taken)
        # The leader is done with either way (taken, busy elsewhere, or nothing to do).
        queued = [pk for pk in queued[1:] if pk not in taken]
    return results


def _converge_led_by(
    request_id: int, *, worker: str, companions: tuple[int, ...]
) -> dict[int, Outcome]:
    lease = settings.PROVISIONING_LEASE_SECONDS
    if not leases.acquire_lease(request_id=request_id, owner=worker, seconds=lease):
        return {request_id: busy("another worker holds the lease")}
    batch = [request_id]
    try:
        leader = Request.objects.select_related("tenant").get(pk=request_id)
        if leader.state not in (RequestState.APPROVED, RequestState.PROVISIONING):
            return {request_id: idle(f"request is {leader.state}")}
        cluster = leader.payload.get("cluster")
        if leader.state == RequestState.APPROVED and leader.kind in BATCHED_KINDS and cluster:
            batch += leases.claim_companions(
                leader_id=request_id,
                owner=worker,
                seconds=lease,
                kinds=BATCHED_KINDS,
                cluster=cluster,
                limit=settings.BERTH_PROVISION_BATCH_MAX - 1,
                first=companions,
            )
        return _converge_locked(leader, batch, worker=worker)
    finally:
        leases.release_leases(request_ids=batch, owner=worker)


def _converge_locked(leader: Request, batch: list[int], *, worker: str) -> dict[int, Outcome]:
    requests = {leader.pk: leader}
    requests.update(
        (r.pk, r) for r in Request.objects.select_related("tenant").filter(pk__in=batch[1:])
    )
    approved = approved_digests(batch)
    results: dict[int, Outcome] = {}
    opening: dict[int, tuple[str, list[dict[str, Any]]]] = {}
    prepared: dict[int, tuple[PlanInput, Plan]] = {}
    resumed: list[Item] = []
    # The batch's plans read what they share once, its digests each repository once.
    with shared_reads(), gitops.one_fetch_per_branch():
        inputs_of = plan_inputs_for([requests[request_id] for request_id in sorted(requests)])
        clusters: dict[str, Cluster] = {}
        unfenced: dict[str, Outcome | None] = {}  # cluster -> its gate (None: open)
        for request_id in sorted(requests):
            tenancy_request, inputs = requests[request_id], inputs_of[request_id]
            if isinstance(inputs, Exception):
                results[request_id] = run_ends.unrenderable(tenancy_request, inputs)
                continue
            name = inputs.cluster.name
            if name not in clusters:
                clusters[name] = Cluster.objects.get(name=name)
            if inputs.namespaces or inputs.grants:  # only where tenants are fenced in
                if name not in unfenced:
                    unfenced[name] = cluster_gate(clusters[name])
                gate = unfenced[name]
                if gate is not None:
                    results[request_id] = run_ends.wait_for_guardrails(
                        tenancy_request, gate.message
                    )
                    continue
            plan = render(inputs)
            if tenancy_request.state == RequestState.APPROVED:
                moved = _moved_since_approval(
                    tenancy_request, inputs, plan, approved.get(request_id)
                )
                if moved:
                    results[request_id] = moved
                    continue
                opening[request_id] = (plan.digest, steps_of(plan, tenancy_request))
                prepared[request_id] = (inputs, plan)
            else:
                # A previous worker died mid-run, or an admin pressed Retry: continue its run.
                run = tenancy_request.runs.filter(state=RunState.RUNNING).first()
                if run is None:
                    results[request_id] = idle("no open run")
                    continue
                run_steps.start_steps(run=run, steps=steps_of(plan, tenancy_request))
                resumed.append(Item(tenancy_request, run, inputs, plan))
    started = services.start_provisioning_all(opening=opening) if opening else []
    items = [Item(requests[run.request_id], run, *prepared[run.request_id]) for run in started]
    items += resumed
    if items:
        results.update(_execute(items, worker=worker, clusters=clusters))
    return results


def _moved_since_approval(
    tenancy_request: Request, inputs: PlanInput, plan: Plan, approved: Bound | None
) -> Outcome | None:
    """Why an approved request does not start now ("" when it does): its plan or GitOps
    change is not what was approved (back to approval), or the repository that says so
    does not answer (it waits). A rule's approval is bound to the plan alone."""
    if approved is None:
        return None
    try:
        # A rule's approval read no repository: it binds to the plan alone.
        binds = None if approved.by_policy else gitops_binds_now(tenancy_request, inputs)
    except GitError as unreachable:
        return wait_for_outage(
            tenancy_request=tenancy_request,
            run=None,
            reason=f"repository unreachable: {unreachable.message}",
            waiting_for=Reason.REPOSITORY_UNREACHABLE,
        )
    now_digest = approval_digest(plan.digest, binds)
    if approved.digest == now_digest:
        return None
    services.return_to_approval(
        request_id=tenancy_request.pk,
        reason="The plan or its GitOps change moved after approval (a tier preset, the "
        "tenant, its namespaces or its repository changed); it needs a new approval.",
    )
    return returned(Reason.MOVED, "plan changed: returned to approval")


def steps_of(plan: Plan, tenancy_request: Request) -> list[dict[str, Any]]:
    """The run's steps, all pending: one per object applied or deleted, and the GitOps
    commit. Removing things, the repository goes first: the roots prune what its files
    described before Berth deletes where it ran, so no engine recreates what is being
    removed."""
    steps = [run_steps.step_row(ref_of(obj), "apply") for obj in plan.apply]
    steps += [run_steps.step_row(ref, "delete") for ref in plan.delete]
    git_row = gitops_step_row(tenancy_request.tenant.gitops_repo_url)
    return [git_row, *steps] if plan.delete else [*steps, git_row]


def _execute(items: list[Item], *, worker: str, clusters: dict[str, Cluster]) -> dict[int, Outcome]:
    """Every item's plan on its cluster (one cluster per batch), then its GitOps step."""
    results: dict[int, Outcome] = {}
    cluster = clusters[items[0].inputs.cluster.name]
    # Validate before create: a plan with one bad object creates nothing anywhere.
    valid = []
    for item in items:
        problems = validate_plan(item.plan, item.inputs)
        if problems:
            results[item.pk] = run_ends.refuse_invalid_plan(
                tenancy_request=item.request, run=item.run, problems=problems
            )
        else:
            valid.append(item)
    if not cluster.plan_only:  # merge-request mode: the pull request before anything else
        items, held = propose_first(valid)
        for item in valid:
            said = held.get(item.pk)
            if isinstance(said, GitFailure):
                said = run_ends.git_failed(tenancy_request=item.request, run=item.run, failure=said)
            if said is not None:
                results[item.pk] = said
    else:
        items = valid
    if not items:
        return results
    # The keys the plans change are held while they change, so what the watcher sees of
    # them meanwhile waits for the records; a key another worker holds (a campaign's
    # wave, a repair) makes its request wait a moment.
    keys_of = {item.pk: _keys_of(item) for item in items}
    keys = {key for each in keys_of.values() for key in each}
    with queue.holding(keys, worker=worker, cause=Cause("request", items[0].pk)) as held:
        for item in items:
            if held & set(keys_of[item.pk]):
                results[item.pk] = run_ends.wait_for_keys(
                    item, sorted(held & set(keys_of[item.pk]))
                )
        items = [item for item in items if item.pk not in results]
        return results | _execute_held(items, cluster=cluster, worker=worker, keys=keys - held)


def _keys_of(item: Item) -> list[Key]:
    """The namespace keys the item's plan changes. Its tenant's key and repository's key are
    changed only by request runs, whose writes there need no hold: the tenant's objects go
    by server-side apply (the same content, whichever batch is last), the repository's
    writer commits one batch at a time (commits.py); holding them would run a tenant's
    batches one after another."""
    return namespace_keys(
        item.inputs.cluster.name,
        [spec.name for spec in item.inputs.namespaces]
        + list(item.inputs.remove_namespaces)
        + [grant.namespace for grant in item.inputs.grants],
    )


def _execute_held(
    items: list[Item], *, cluster: Cluster, worker: str, keys: set[Key]
) -> dict[int, Outcome]:
    results: dict[int, Outcome] = {}
    if not items:
        return results
    outcomes.record_namespaces_pending(
        requests=[(i.request, i.inputs) for i in items], cluster=cluster
    )

    if cluster.plan_only:
        for item in items:
            for index in range(len(item.run.steps)):
                run_steps.note_step(
                    run=item.run,
                    index=index,
                    outcome="skipped",
                    attempts=0,
                    message="plan-only cluster: nothing was applied",
                )
        return results | _finish(items, outcome=ready("plan-only cluster", Reason.PLAN_ONLY))

    lease = settings.PROVISIONING_LEASE_SECONDS
    batch = [item.pk for item in items]

    def renew() -> None:
        leases.renew_leases(request_ids=batch, owner=worker, seconds=lease)
        queue.renew_holds(keys, worker=worker)

    start_removals(items)
    removing = [item for item in items if item.plan.delete]
    for item in removing:
        failure = gitops_step(
            tenancy_request=item.request, run=item.run, inputs=item.inputs, index=item.git_index
        )
        if failure:
            results[item.pk] = run_ends.git_failed(
                tenancy_request=item.request, run=item.run, failure=failure
            )
    if removing:
        run_steps.write_steps(runs=[item.run for item in removing if item.pk not in results])
        renew()
    items = [item for item in items if item.pk not in results]

    try:
        client = cluster_client(cluster)
        stopped = apply_plans(client, items, cluster=cluster, renew=renew)
        for item in items:
            if item.plan.delete and item.pk not in stopped:
                try:
                    delete_plan(client, item, cluster=cluster)
                except KubeError as error:
                    stopped[item.pk] = (run_ends.first_pending(item.run), error)
    except KubeError as error:  # no client for the cluster: nothing was tried
        stopped = {item.pk: (run_ends.first_pending(item.run), error) for item in items}
    for item in items:
        if item.pk in stopped:
            failed, error = stopped[item.pk]
            results[item.pk] = run_ends.stopped(item, failed, error, cluster=cluster)
    items = [item for item in items if item.pk not in results]

    creating = [item for item in items if not item.plan.delete]
    if creating:
        renew()
        if any(writes_a_repository(item.request) for item in creating):
            # A push takes a while: what was applied is on record meanwhile. (Else the
            # steps are written once, as the runs close.)
            run_steps.write_steps(runs=[item.run for item in creating])
        failures = gitops_steps([(i.request, i.run, i.inputs, i.git_index) for i in creating])
        for item in creating:
            if failures[item.pk]:
                results[item.pk] = run_ends.git_failed(
                    tenancy_request=item.request, run=item.run, failure=failures[item.pk]
                )
    items = [item for item in items if item.pk not in results]
    return results | _finish(items, outcome=ready())


def _finish(items: list[Item], *, outcome: Outcome) -> dict[int, Outcome]:
    """Records say what the cluster now has, the requests are ready, and what they removed
    ends with them."""
    if not items:
        return {}
    outcomes.record_outcomes(requests=[(i.request, i.inputs) for i in items])
    services.mark_all_ready(runs=[item.run for item in items])
    for item in items:
        if item.plan.delete:
            for creator in creators_of(item.inputs.remove_namespaces, item.request):
                finish_decommission_of(creator)
        ending = outcomes.environment_ended_by(item.request)
        if ending is not None:
            finish_decommission_of(ending.request_id)
        if plan_kind_for(item.request.kind).retires_tenant(item.request.payload):
            services.retire_tenant(tenant_id=item.request.tenant_id, tenancy_request=item.request)
    return {item.pk: outcome for item in items}
