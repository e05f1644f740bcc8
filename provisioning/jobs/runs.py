"""The reconciler: converge a cluster to an approved plan.

Idempotent and safe to re-run at any time: the database says what was approved, the plan
says what that means, and server-side apply makes the cluster match. A worker holds a
lease on the request while it works, so two workers never provision the same request.
Once the cluster matches, the tenant's GitOps repository is brought in step in one commit
(`commits.write_gitops`): the last step of every run.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.utils import timezone

from provisioning import gitops
from provisioning.gitops import GitError
from provisioning.inputs import plan_input_for, plan_inputs_for, shared_reads
from provisioning.inputs.kinds import plan_kind_for, plan_kinds_where
from provisioning.jobs.clusters import cluster_client
from provisioning.jobs.commits import (
    GitFailure,
    gitops_preview,
    gitops_step,
    gitops_step_row,
    gitops_steps,
    writes_a_repository,
)
from provisioning.jobs.guardrails import guardrails_problem
from provisioning.kube import Applied, ClusterClient, KubeError
from provisioning.plan import KIND_ORDER, LABEL_TENANT, MANAGED_BY, Plan, PlanInput, ref_of, render
from provisioning.records import applied_objects, leases, outcomes, run_steps
from provisioning.validation import validate_plan
from tenants import services
from tenants.choices import Decision, RequestState, RunState
from tenants.models import Approval, Cluster, Namespace, Request, Run
from tenants.selectors import approval_digest

logger = logging.getLogger(__name__)


def current_plan(tenancy_request: Request) -> Plan:
    return render(plan_input_for(tenancy_request))


def gitops_binds_now(tenancy_request: Request, inputs: PlanInput | None = None) -> str | None:
    """The part of the GitOps change a person approving now would bind to, read from the
    tenant's repository (None: it holds nothing readable; tenants.selectors.approval_digest)."""
    try:
        return gitops_preview(tenancy_request, inputs).binds
    except GitError as error:
        if error.transient:
            raise  # not readable now says nothing about what it holds: wait, do not re-ask
        return None


def approved_digest(tenancy_request: Request) -> str:
    bound = approved_digests([tenancy_request.pk]).get(tenancy_request.pk)
    return bound.digest if bound else ""


@dataclass(frozen=True)
class Bound:
    """The digest an approval is bound to, and whether a rule gave it (bound to the plan
    alone: a rule reads no repository) or a person who saw the plan and the GitOps diff."""

    digest: str
    by_policy: bool


def approved_digests(request_ids: list[int]) -> dict[int, Bound]:
    """Request id -> what its latest approval is bound to (none: approved before Berth
    bound approvals to digests)."""
    latest: dict[int, Bound] = {}
    for request_id, digest, approver in (
        Approval.objects.filter(request_id__in=request_ids, decision=Decision.APPROVE)
        .order_by("request_id", "-created_at", "-id")
        .values_list("request_id", "plan_digest", "approver_id")
    ):
        if request_id not in latest and digest:
            latest[request_id] = Bound(digest, by_policy=approver is None)
    return latest


# Requests that only create: a worker taking one of them approved takes others approved for
# the same cluster with it. Removals and the rest go one at a time.
BATCHED_KINDS = plan_kinds_where(batched=True)


@dataclass
class Item:
    """One request of a batch, as far as the worker got with it."""

    request: Request
    run: Run
    inputs: PlanInput
    plan: Plan

    @property
    def pk(self) -> int:
        return self.request.pk

    @property
    def git_index(self) -> int:
        """Removing things, the repository goes first (see steps_of); else last."""
        return 0 if self.plan.delete else len(self.run.steps) - 1

    @property
    def offset(self) -> int:
        """Where the plan's apply steps start in the run."""
        return 1 if self.plan.delete else 0


def batches_of(request_ids: list[int]) -> list[list[int]]:
    """The requests one transition made ready for a worker, as the jobs to queue: those that
    only create, by cluster, up to BERTH_PROVISION_BATCH_MAX a job (the first id leads);
    the rest one a job."""
    size = max(settings.BERTH_PROVISION_BATCH_MAX, 1)
    together: dict[str, list[int]] = {}
    alone = []
    for request_id, kind, payload in (
        Request.objects.filter(pk__in=request_ids)
        .order_by("pk")
        .values_list("pk", "kind", "payload")
    ):
        cluster = payload.get("cluster") if isinstance(payload, dict) else None
        if kind in BATCHED_KINDS and cluster:
            together.setdefault(cluster, []).append(request_id)
        else:
            alone.append([request_id])
    return [
        ids[start : start + size] for ids in together.values() for start in range(0, len(ids), size)
    ] + alone


def converge(*, request_id: int, worker: str) -> str:
    """Bring one request's objects into the cluster. Returns what happened, for logs."""
    return converge_batch(request_id=request_id, worker=worker)[request_id]


def converge_batch(
    *, request_id: int, worker: str, companions: tuple[int, ...] = ()
) -> dict[int, str]:
    """Provision the request and, when it is an approved one that only creates, up to
    BERTH_PROVISION_BATCH_MAX - 1 others approved for the same cluster that no worker holds
    (`companions` first: the job was queued for them too): one lease, one transition, one
    apply phase and one GitOps push for them all, while each keeps its own run, audit events
    and outcome. A job answers for every request it was queued for: when the first is taken
    or done, the next one leads. Returns what happened to each."""
    results: dict[int, str] = {}
    queued = [request_id, *companions]
    while queued:
        taken = _converge_led_by(queued[0], worker=worker, companions=tuple(queued[1:]))
        results.update(taken)
        # The leader is done with either way (taken, busy elsewhere, or nothing to do).
        queued = [pk for pk in queued[1:] if pk not in taken]
    return results


def _converge_led_by(
    request_id: int, *, worker: str, companions: tuple[int, ...]
) -> dict[int, str]:
    lease = settings.PROVISIONING_LEASE_SECONDS
    if not leases.acquire_lease(request_id=request_id, owner=worker, seconds=lease):
        return {request_id: "busy: another worker holds the lease"}
    batch = [request_id]
    try:
        leader = Request.objects.select_related("tenant").get(pk=request_id)
        if leader.state not in (RequestState.APPROVED, RequestState.PROVISIONING):
            return {request_id: f"nothing to do: request is {leader.state}"}
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


def _converge_locked(leader: Request, batch: list[int], *, worker: str) -> dict[int, str]:
    requests = {leader.pk: leader}
    requests.update(
        (r.pk, r) for r in Request.objects.select_related("tenant").filter(pk__in=batch[1:])
    )
    approved = approved_digests(batch)
    results: dict[int, str] = {}
    opening: dict[int, tuple[str, list[dict[str, Any]]]] = {}
    prepared: dict[int, tuple[PlanInput, Plan]] = {}
    resumed: list[Item] = []
    # The batch's plans read what they share once, its digests each repository once.
    with shared_reads(), gitops.one_fetch_per_branch():
        inputs_of = plan_inputs_for([requests[request_id] for request_id in sorted(requests)])
        unfenced: dict[str, str] = {}  # cluster -> why its guardrails do not hold ("": they do)
        for request_id in sorted(requests):
            tenancy_request, inputs = requests[request_id], inputs_of[request_id]
            if isinstance(inputs, Exception):
                results[request_id] = _unrenderable(tenancy_request, inputs)
                continue
            if inputs.namespaces:  # it applies tenant namespaces: only where they are fenced
                if inputs.cluster.name not in unfenced:
                    unfenced[inputs.cluster.name] = guardrails_problem(
                        Cluster.objects.get(name=inputs.cluster.name)
                    )
                if unfenced[inputs.cluster.name]:
                    results[request_id] = _wait_for_guardrails(
                        tenancy_request, unfenced[inputs.cluster.name]
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
                    results[request_id] = "nothing to do: no open run"
                    continue
                run_steps.start_steps(run=run, steps=steps_of(plan, tenancy_request))
                resumed.append(Item(tenancy_request, run, inputs, plan))
    started = services.start_provisioning_all(opening=opening) if opening else []
    items = [Item(requests[run.request_id], run, *prepared[run.request_id]) for run in started]
    items += resumed
    if items:
        results.update(_execute(items, worker=worker))
    return results


def _wait_for_guardrails(tenancy_request: Request, problem: str) -> str:
    """The cluster's guardrails are missing or outdated: the request waits, saying so, as
    long as that lasts (no deadline: nothing is wrong with the request), and goes on once a
    platform admin installs them."""
    now = timezone.now()
    leases.wait(
        request_id=tenancy_request.pk,
        since=tenancy_request.waiting_since or now,
        until=now + timedelta(seconds=settings.BERTH_GUARDRAILS_CHECK_SECONDS),
        reason=problem,
    )
    logger.warning("request %s waits: %s", tenancy_request.pk, problem)
    return f"waiting: {problem}"


def _unrenderable(tenancy_request: Request, error: Exception) -> str:
    """What the request names cannot be read into a plan (a tier, a project or a namespace
    it names is gone): it fails saying so, and the others of its batch go on."""
    message = f"Its plan could not be rendered, nothing was applied: {error}"
    logger.warning("request %s: %s", tenancy_request.pk, message, exc_info=True)
    if tenancy_request.state == RequestState.APPROVED:
        run = services.start_provisioning(request_id=tenancy_request.pk, plan_digest="")
    else:
        run = tenancy_request.runs.filter(state=RunState.RUNNING).first()
    if run is None:
        return "nothing to do: no open run"
    services.mark_failed(run=run, error=message)
    return f"failed: {message}"


def _moved_since_approval(
    tenancy_request: Request, inputs: PlanInput, plan: Plan, approved: Bound | None
) -> str:
    """Why an approved request does not start now ("" when it does): its plan or GitOps
    change is not what was approved (back to approval), or the repository that says so
    does not answer (it waits). A rule's approval is bound to the plan alone."""
    if approved is None:
        return ""
    try:
        # A rule's approval read no repository: it binds to the plan alone.
        binds = None if approved.by_policy else gitops_binds_now(tenancy_request, inputs)
    except GitError as unreachable:
        return wait_for_outage(
            tenancy_request=tenancy_request,
            run=None,
            reason=f"repository unreachable: {unreachable.message}",
        )
    now_digest = approval_digest(plan.digest, binds)
    if approved.digest == now_digest:
        return ""
    services.return_to_approval(
        request_id=tenancy_request.pk,
        reason="The plan or its GitOps change moved after approval (a tier preset, the "
        "tenant, its namespaces or its repository changed); it needs a new approval.",
    )
    return "plan changed: returned to approval"


def steps_of(plan: Plan, tenancy_request: Request) -> list[dict[str, Any]]:
    """The run's steps, all pending: one per object applied or deleted, and the GitOps
    commit. Removing things, the repository goes first: the roots prune what its files
    described before Berth deletes where it ran, so no engine recreates what is being
    removed."""
    steps = [run_steps.step_row(ref_of(obj), "apply") for obj in plan.apply]
    steps += [run_steps.step_row(ref, "delete") for ref in plan.delete]
    git_row = gitops_step_row(tenancy_request.tenant.gitops_repo_url)
    return [git_row, *steps] if plan.delete else [*steps, git_row]


def _execute(items: list[Item], *, worker: str) -> dict[int, str]:
    """Every item's plan on its cluster (one cluster per batch), then its GitOps step."""
    results: dict[int, str] = {}
    cluster = Cluster.objects.get(name=items[0].inputs.cluster.name)
    # Validate before create: a plan with one bad object creates nothing anywhere.
    valid = []
    for item in items:
        problems = validate_plan(item.plan, item.inputs)
        if problems:
            results[item.pk] = _refuse_invalid_plan(
                tenancy_request=item.request, run=item.run, problems=problems
            )
        else:
            valid.append(item)
    items = valid
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
        return results | _finish(items, outcome="ready (plan-only cluster)")

    lease = settings.PROVISIONING_LEASE_SECONDS
    batch = [item.pk for item in items]

    def renew() -> None:
        leases.renew_leases(request_ids=batch, owner=worker, seconds=lease)

    _start_removals(items)
    removing = [item for item in items if item.plan.delete]
    for item in removing:
        failure = gitops_step(
            tenancy_request=item.request, run=item.run, inputs=item.inputs, index=item.git_index
        )
        if failure:
            results[item.pk] = _git_failed(
                tenancy_request=item.request, run=item.run, failure=failure
            )
    if removing:
        run_steps.write_steps(runs=[item.run for item in removing if item.pk not in results])
        renew()
    items = [item for item in items if item.pk not in results]

    try:
        client = cluster_client(cluster)
        stopped = _apply_plans(client, items, cluster=cluster, renew=renew)
        for item in items:
            if item.plan.delete and item.pk not in stopped:
                try:
                    _delete_plan(client, item, cluster=cluster)
                except KubeError as error:
                    stopped[item.pk] = (_first_pending(item.run), error)
    except KubeError as error:  # no client for the cluster: nothing was tried
        stopped = {item.pk: (_first_pending(item.run), error) for item in items}
    for item in items:
        if item.pk in stopped:
            failed, error = stopped[item.pk]
            results[item.pk] = _stopped(item, failed, error, cluster=cluster)
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
                results[item.pk] = _git_failed(
                    tenancy_request=item.request, run=item.run, failure=failures[item.pk]
                )
    items = [item for item in items if item.pk not in results]
    return results | _finish(items, outcome="ready")


def _finish(items: list[Item], *, outcome: str) -> dict[int, str]:
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


def _start_removals(items: list[Item]) -> None:
    """What the items remove starts its own decommission: the requests that made the
    namespaces, and an ending environment's own request."""
    for item in items:
        tenancy_request = item.request
        reason = tenancy_request.payload.get("reason", "")
        if item.plan.delete:
            for creator in outcomes.mark_namespaces_decommissioning(
                tenancy_request=tenancy_request, inputs=item.inputs
            ):
                start_decommission_of(creator, reason=reason)
        ending = outcomes.environment_ended_by(tenancy_request)
        if ending is not None:
            # The environment's own request follows it, whether or not its namespace goes.
            cause = tenancy_request.payload.get("cause", "")
            start_decommission_of(
                ending.request_id, reason=reason or f"Environment {ending.slug} ended ({cause})."
            )


def _first_pending(run: Run) -> int:
    return next(i for i, step in enumerate(run.steps) if step["outcome"] == "pending")


def _stopped(item: Item, failed: int, error: KubeError, *, cluster: Cluster) -> str:
    """An object of the item's plan was refused, or the cluster did not answer."""
    if error.transient:
        # The step stays pending: the next try starts there, past what this one applied.
        run_steps.write_steps(runs=[item.run])
        return wait_for_outage(
            tenancy_request=item.request, run=item.run, reason=f"{cluster.name}: {error.message}"
        )
    run_steps.note_step(
        run=item.run, index=failed, outcome="failed", attempts=error.attempts, message=error.message
    )
    message = f"{item.run.steps[failed]['object']}: {error.message}"
    logger.warning("request %s failed: %s", item.pk, message)
    services.mark_failed(run=item.run, error=message)
    return f"failed: {message}"


APPLIED = ("created", "configured", "unchanged")
# How stale a running plan's recorded progress may get (the run page shows it live).
PROGRESS_SECONDS = 1.0


S = TypeVar("S")


def wave_of(obj: dict[str, Any]) -> int:
    """When an object is applied, as a rank: the Namespace first, then the namespace's own
    objects up to the Roles (nothing among them is checked against another), then each
    later kind on its own: RoleBindings once the Roles they grant exist (the API server's
    escalation check reads the Role), and the GitOps engines' objects, which admission
    checks against the ConfigMaps and Secrets before them."""
    rank = KIND_ORDER.get(obj["kind"], 99)
    return 0 if rank == 0 else 1 if rank < KIND_ORDER["RoleBinding"] else rank


def apply_waves(steps: Iterable[S], object_of: Callable[[S], dict[str, Any]]) -> list[list[S]]:
    """`steps` (in apply order) grouped into the waves applied one after the other, each
    wave's objects concurrently (see wave_of); within a wave, in the order given."""
    waves: dict[int, list[S]] = {}
    for step in steps:
        waves.setdefault(wave_of(object_of(step)), []).append(step)
    return [waves[rank] for rank in sorted(waves)]


@functools.cache
def _apply_pool() -> ThreadPoolExecutor:
    """One per process, made on first use (after a prefork worker forked): its threads only
    make API calls, never database queries."""
    return ThreadPoolExecutor(
        max_workers=settings.BERTH_APPLY_CONCURRENCY, thread_name_prefix="berth-apply"
    )


@dataclass(frozen=True)
class _Step:
    item: Item
    index: int  # in the item's run
    obj: dict[str, Any]
    key: tuple[str, str]  # (apiVersion, Kind/namespace/name)


def _apply_plans(
    client: ClusterClient, items: list[Item], *, cluster: Cluster, renew: Callable[[], None]
) -> dict[int, tuple[int, KubeError]]:
    """Apply every item's objects, one server-side apply each, wave by wave across the
    items: a wave's objects go out together, BERTH_APPLY_CONCURRENCY at a time. An object
    several items want (the tenant's own, in a batch of its requests) is applied once, as
    the last of them renders it: a server-side apply leaves what the last apply of its
    field manager said, so applying the others first would change nothing in the end. An
    item stops at its first refused object and the others go on. Outcomes and versions are
    written together: when the plans are done or stopped, and while they run at most every
    PROGRESS_SECONDS, so a long batch shows its progress. Returns, per stopped item, the
    step that stopped it and why."""
    lease = settings.PROVISIONING_LEASE_SECONDS
    waves = apply_waves(
        (
            _Step(item, item.offset + position, obj, (obj["apiVersion"], str(ref_of(obj))))
            for item in items
            for position, obj in enumerate(item.plan.apply)
            if item.run.steps[item.offset + position]["outcome"] not in APPLIED
        ),
        lambda step: step.obj,
    )
    known = applied_objects.applied_versions(
        cluster=cluster, refs=[step.key for wave in waves for step in wave]
    )
    versions: dict[tuple[str, str], str] = {}
    stopped: dict[int, tuple[int, KubeError]] = {}
    unwritten = [False]  # an outcome noted since the last write

    def write_progress() -> None:
        if unwritten[0]:
            run_steps.write_steps(runs=[item.run for item in items])
            applied_objects.remember_versions(cluster=cluster, versions=versions)
            versions.clear()
            unwritten[0] = False

    renewed_at = written_at = time.monotonic()
    pool = _apply_pool()
    try:
        for wave in waves:
            wanting: dict[tuple[str, str], list[_Step]] = {}
            for step in wave:
                if step.item.pk not in stopped:
                    wanting.setdefault(step.key, []).append(step)
            futures = {
                key: pool.submit(apply_object, client, steps[-1].obj, known.get(key))
                for key, steps in wanting.items()
            }
            for key, future in futures.items():
                unwritten[0] = True
                try:
                    applied = future.result()
                except KubeError as error:
                    for step in wanting[key]:
                        stopped.setdefault(step.item.pk, (step.index, error))
                    continue
                versions[key] = applied.resource_version
                *others, last = wanting[key]
                run_steps.note_step(
                    run=last.item.run,
                    index=last.index,
                    outcome=applied.result,
                    attempts=applied.attempts,
                )
                for step in others:
                    run_steps.note_step(
                        run=step.item.run,
                        index=step.index,
                        outcome=applied.result,
                        attempts=0,
                        message=f"applied once for the batch, as request #{last.item.pk}'s",
                    )
            if time.monotonic() - written_at > PROGRESS_SECONDS:
                write_progress()
                written_at = time.monotonic()
            # Renewed well before it runs out, not after every wave (a write saved each).
            if time.monotonic() - renewed_at > lease / 3:
                renew()
                renewed_at = time.monotonic()
    except BaseException:
        # Whatever stopped the plans, what was applied is on record: a retry skips it.
        write_progress()
        raise
    # The steps go with what comes next (see _execute): the push, a wait, or the runs' close.
    applied_objects.remember_versions(cluster=cluster, versions=versions)
    return stopped


def _delete_plan(client: ClusterClient, item: Item, *, cluster: Cluster) -> None:
    """Delete in order, each only if Berth's labels say it is this tenant's."""
    plan, run, tenant = item.plan, item.run, item.inputs.tenant.slug
    offset = item.offset + len(plan.apply)
    for position, ref in enumerate(plan.delete):
        if run.steps[offset + position]["outcome"] in ("deleted", "absent"):
            continue
        _check_owned(client.get(ref), ref, tenant=tenant)
        outcome = client.delete(ref)
        if ref.kind == "Namespace" and not client.wait_until_gone(
            ref, timeout=settings.NAMESPACE_TERMINATION_TIMEOUT
        ):
            raise KubeError(
                f"{ref} is still terminating after {settings.NAMESPACE_TERMINATION_TIMEOUT:.0f}s",
                status=None,
                transient=True,
            )
        run_steps.record_step(
            run=run, index=offset + position, outcome=outcome.result, attempts=outcome.attempts
        )
    applied_objects.forget_versions(cluster=cluster, refs=[str(ref) for ref in plan.delete])


def _git_failed(*, tenancy_request: Request, run: Run, failure: GitFailure) -> str:
    if failure.transient:
        return wait_for_outage(
            tenancy_request=tenancy_request,
            run=run,
            reason=f"repository unreachable: {failure.message}",
        )
    services.mark_failed(run=run, error=failure.error)
    return f"failed: {failure.error}"


def outage_delay(waited: timedelta) -> timedelta:
    """Half the time waited so far, within the configured bounds: tries thin out as an
    outage lasts, and the first comes soon."""
    seconds = max(settings.BERTH_OUTAGE_RETRY_SECONDS, waited.total_seconds() / 2)
    return timedelta(seconds=min(seconds, settings.BERTH_OUTAGE_RETRY_MAX_SECONDS))


def wait_for_outage(*, tenancy_request: Request, run: Run | None, reason: str) -> str:
    """The cluster or the repository did not answer after the client's own retries: the
    request waits and is tried again by itself (the sweep, or the worker's delayed task),
    resuming where it stopped; past the deadline it fails with the reason."""
    now = timezone.now()
    since = tenancy_request.waiting_since or now
    deadline = timedelta(seconds=settings.BERTH_OUTAGE_DEADLINE_SECONDS)
    if now - since >= deadline:
        message = (
            f"{reason}; gave up after waiting since {since:%Y-%m-%d %H:%M} UTC "
            f"({deadline.total_seconds() / 60:.0f} minutes). Retry when it is back."
        )
        logger.warning("request %s failed: %s", tenancy_request.pk, message)
        if run is not None:
            stopped = next(
                (i for i, step in enumerate(run.steps) if step["outcome"] == "pending"), None
            )
            if stopped is not None:
                run_steps.record_step(
                    run=run, index=stopped, outcome="failed", attempts=0, message=reason
                )
                message = f"{run.steps[stopped]['object']}: {message}"
            services.mark_failed(run=run, error=message)
            return f"failed: {message}"
        leases.stop_waiting(request_id=tenancy_request.pk)
        services.return_to_approval(request_id=tenancy_request.pk, reason=message)
        return f"returned to approval: {message}"
    next_try = now + outage_delay(now - since)
    leases.wait(request_id=tenancy_request.pk, since=since, until=next_try, reason=reason)
    logger.warning(
        "request %s waits until %s: %s",
        tenancy_request.pk,
        next_try.isoformat(timespec="seconds"),
        reason,
    )
    return f"waiting: {reason}"


def _refuse_invalid_plan(
    *, tenancy_request: Request, run: Run, problems: dict[str, list[str]]
) -> str:
    """The plan failed validation: fail the request before the first API call or commit,
    each bad object's step saying what is wrong with it."""
    for index, step in enumerate(run.steps):
        if step["object"] in problems:
            message = "; ".join(problems[step["object"]])
            run_steps.record_step(
                run=run, index=index, outcome="failed", attempts=0, message=message
            )
    reasons = " | ".join(f"{key}: {'; '.join(found)}" for key, found in problems.items())
    message = f"The plan failed validation, nothing was applied: {reasons}"
    logger.warning("request %s refused before any API call: %s", tenancy_request.pk, reasons)
    services.mark_failed(run=run, error=message)
    return f"failed: {message}"


def apply_object(
    client: ClusterClient, obj: dict[str, Any], known_version: str | None = None
) -> Applied:
    """Server-side apply; a RoleBinding whose roleRef changed (the API refuses to change
    one: a tier moved to another ClusterRole) is deleted and created again."""
    try:
        return client.apply(obj, known_version=known_version)
    except KubeError as error:
        if obj["kind"] != "RoleBinding" or "cannot change roleRef" not in error.message:
            raise
    client.delete(ref_of(obj))
    return replace(client.apply(obj), result="configured")


def _check_owned(live: dict[str, Any] | None, ref, *, tenant: str) -> None:
    """Berth deletes only what carries its ownership labels for this tenant."""
    if live is None:
        return
    labels = live["metadata"].get("labels") or {}
    if labels.get(MANAGED_BY) != "berth" or labels.get(LABEL_TENANT) != tenant:
        raise KubeError(
            f"refusing to delete {ref}: it is not labelled as Berth's for tenant {tenant} "
            f"(labels: {MANAGED_BY}={labels.get(MANAGED_BY)!r}, "
            f"{LABEL_TENANT}={labels.get(LABEL_TENANT)!r})",
            status=None,
            transient=False,
        )


def start_decommission_of(request_id: int, *, reason: str) -> None:
    creator = Request.objects.get(pk=request_id)
    # Only a request that made exactly this one namespace (or environment) follows it.
    if plan_kind_for(creator.kind).follows_its_namespace and creator.state == RequestState.READY:
        services.start_decommission(request_id=request_id, actor=None, reason=reason)


def creators_of(names: tuple[str, ...], tenancy_request: Request) -> list[int]:
    return list(
        Namespace.objects.filter(tenant=tenancy_request.tenant, name__in=names)
        .exclude(request=None)
        .values_list("request_id", flat=True)
    )


def finish_decommission_of(request_id: int) -> None:
    if Request.objects.filter(pk=request_id, state=RequestState.DECOMMISSIONING).exists():
        services.mark_decommissioned(request_id=request_id)
