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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from provisioning import services as records
from provisioning.engine.clusters import cluster_client
from provisioning.engine.commits import GitFailure, gitops_preview, gitops_step, gitops_step_row
from provisioning.gitops import GitError
from provisioning.inputs import plan_input_for
from provisioning.kube import Applied, ClusterClient, KubeError
from provisioning.plan import KIND_ORDER, LABEL_TENANT, MANAGED_BY, Plan, ref_of, render
from provisioning.validation import validate_plan
from tenants import services
from tenants.choices import Decision, RequestKind, RequestState, RunState
from tenants.engine import approval_digest
from tenants.models import Cluster, Namespace, Request, Run

logger = logging.getLogger(__name__)


def current_plan(tenancy_request: Request) -> Plan:
    return render(plan_input_for(tenancy_request))


def current_digest(tenancy_request: Request, plan: Plan) -> str:
    """The digest a person approving now would bind to: the plan and the GitOps change
    (read from the tenant's repository)."""
    try:
        binds: str | None = gitops_preview(tenancy_request).binds
    except GitError as error:
        if error.transient:
            raise  # not readable now says nothing about what it holds: wait, do not re-ask
        binds = None
    return approval_digest(plan.digest, binds)


def approved_digest(tenancy_request: Request) -> str:
    approval = (
        tenancy_request.approvals.filter(decision=Decision.APPROVE).order_by("-created_at").first()
    )
    return approval.plan_digest if approval else ""


def converge(*, request_id: int, worker: str) -> str:
    """Bring one request's objects into the cluster. Returns what happened, for logs."""
    lease = settings.PROVISIONING_LEASE_SECONDS
    if not records.acquire_lease(request_id=request_id, owner=worker, seconds=lease):
        return "busy: another worker holds the lease"
    try:
        return _converge_locked(request_id=request_id, worker=worker)
    finally:
        records.release_lease(request_id=request_id, owner=worker)


def _converge_locked(*, request_id: int, worker: str) -> str:
    tenancy_request = Request.objects.select_related("tenant").get(pk=request_id)
    inputs = plan_input_for(tenancy_request)
    plan = render(inputs)

    if tenancy_request.state == RequestState.APPROVED:
        approved = approved_digest(tenancy_request)
        try:
            now_digest = current_digest(tenancy_request, plan) if approved else ""
        except GitError as unreachable:
            return wait_for_outage(tenancy_request=tenancy_request, run=None,
                                   reason=f"repository unreachable: {unreachable.message}")
        if approved and approved != now_digest:
            services.return_to_approval(
                request_id=request_id,
                reason="The plan or its GitOps change moved after approval (a tier preset, "
                "the tenant, its namespaces or its repository changed); it needs a new "
                "approval.",
            )
            return "plan changed: returned to approval"
        run = services.start_provisioning(request_id=request_id, plan_digest=plan.digest,
                                          steps=steps_of(plan, tenancy_request))
    elif tenancy_request.state == RequestState.PROVISIONING:
        # A previous worker died mid-run, or an admin pressed Retry: continue its run.
        run = tenancy_request.runs.filter(state=RunState.RUNNING).first()
        if run is None:
            return "nothing to do: no open run"
        records.start_steps(run=run, steps=steps_of(plan, tenancy_request))
    else:
        return f"nothing to do: request is {tenancy_request.state}"

    return _execute(
        tenancy_request=tenancy_request, run=run, inputs=inputs, plan=plan, worker=worker
    )


def steps_of(plan: Plan, tenancy_request: Request) -> list[dict[str, Any]]:
    """The run's steps, all pending: one per object applied or deleted, and the GitOps
    commit. Removing things, the repository goes first: the roots prune what its files
    described before Berth deletes where it ran, so no engine recreates what is being
    removed."""
    steps = [records.step_row(ref_of(obj), "apply") for obj in plan.apply]
    steps += [records.step_row(ref, "delete") for ref in plan.delete]
    git_row = gitops_step_row(tenancy_request.tenant.gitops_repo_url)
    return [git_row, *steps] if plan.delete else [*steps, git_row]


def _execute(*, tenancy_request: Request, run: Run, inputs, plan: Plan, worker: str) -> str:  # noqa: ANN001
    cluster = Cluster.objects.get(name=inputs.cluster.name)
    git_first = bool(plan.delete)
    git_index = 0 if git_first else len(run.steps) - 1
    # Validate before create: a plan with one bad object creates nothing anywhere.
    problems = validate_plan(plan, inputs)
    if problems:
        return _refuse_invalid_plan(tenancy_request=tenancy_request, run=run, problems=problems)
    records.record_namespaces_pending(tenancy_request=tenancy_request, inputs=inputs,
                                     cluster=cluster)

    if cluster.plan_only:
        for index in range(len(run.steps)):
            records.record_step(
                run=run,
                index=index,
                outcome="skipped",
                attempts=0,
                message="plan-only cluster: nothing was applied",
            )
        records.record_outcome(tenancy_request=tenancy_request, inputs=inputs)
        services.mark_ready(run=run)
        return "ready (plan-only cluster)"

    reason = tenancy_request.payload.get("reason", "")
    if plan.delete:
        for creator in records.mark_namespaces_decommissioning(
            tenancy_request=tenancy_request, inputs=inputs
        ):
            start_decommission_of(creator, reason=reason)
    ending = records.environment_ended_by(tenancy_request)
    if ending is not None:
        # The environment's own request follows it, whether or not its namespace goes too.
        cause = tenancy_request.payload.get("cause", "")
        start_decommission_of(
            ending.request_id, reason=reason or f"Environment {ending.slug} ended ({cause})."
        )

    lease = settings.PROVISIONING_LEASE_SECONDS
    if git_first:
        failure = gitops_step(tenancy_request=tenancy_request, run=run, inputs=inputs,
                              index=git_index)
        if failure:
            return _git_failed(tenancy_request=tenancy_request, run=run, failure=failure)
        records.renew_lease(request_id=tenancy_request.pk, owner=worker, seconds=lease)
    offset = 1 if git_first else 0
    try:
        client = cluster_client(cluster)
        stopped = _apply_plan(client, plan, run=run, offset=offset, cluster=cluster,
                              renew=lambda: records.renew_lease(
                                  request_id=tenancy_request.pk, owner=worker, seconds=lease))
        if stopped is None:
            _delete_plan(client, plan, run=run, offset=offset + len(plan.apply),
                         cluster=cluster, tenant=inputs.tenant.slug)
    except KubeError as error:
        stopped = (next(i for i, step in enumerate(run.steps) if step["outcome"] == "pending"),
                   error)
    if stopped is not None:
        failed, error = stopped
        if error.transient:
            # The step stays pending: the next try starts there.
            return wait_for_outage(tenancy_request=tenancy_request, run=run,
                                   reason=f"{cluster.name}: {error.message}")
        records.record_step(
            run=run, index=failed, outcome="failed", attempts=error.attempts, message=error.message
        )
        message = f"{run.steps[failed]['object']}: {error.message}"
        logger.warning("request %s failed: %s", tenancy_request.pk, message)
        services.mark_failed(run=run, error=message)
        return f"failed: {message}"

    if not git_first:
        records.renew_lease(request_id=tenancy_request.pk, owner=worker, seconds=lease)
        failure = gitops_step(tenancy_request=tenancy_request, run=run, inputs=inputs,
                              index=git_index)
        if failure:
            return _git_failed(tenancy_request=tenancy_request, run=run, failure=failure)

    records.record_outcome(tenancy_request=tenancy_request, inputs=inputs)
    services.mark_ready(run=run)
    if plan.delete:
        for creator in creators_of(inputs.remove_namespaces, tenancy_request):
            finish_decommission_of(creator)
    if ending is not None:
        finish_decommission_of(ending.request_id)
    return "ready"


APPLIED = ("created", "configured", "unchanged")
# How stale a running plan's recorded progress may get (the run page shows it live).
PROGRESS_SECONDS = 1.0


def apply_waves(objects: tuple[dict[str, Any], ...]) -> list[list[int]]:
    """Positions of `objects` (in apply order) grouped into waves applied one after the
    other, each wave's objects concurrently: the Namespace first, then the namespace's own
    objects up to the Roles (nothing among them is checked against another), then each later
    kind on its own: RoleBindings once the Roles they grant exist (the API server's
    escalation check reads the Role), and the GitOps engines' objects, which admission
    checks against the ConfigMaps and Secrets before them."""
    waves: dict[int, list[int]] = {}
    for position, obj in enumerate(objects):
        rank = KIND_ORDER.get(obj["kind"], 99)
        wave = 0 if rank == 0 else 1 if rank < KIND_ORDER["RoleBinding"] else rank
        waves.setdefault(wave, []).append(position)
    return [waves[key] for key in sorted(waves)]


@functools.cache
def _apply_pool() -> ThreadPoolExecutor:
    """One per process, made on first use (after a prefork worker forked): its threads only
    make API calls, never database queries."""
    return ThreadPoolExecutor(max_workers=settings.BERTH_APPLY_CONCURRENCY,
                              thread_name_prefix="berth-apply")


def _apply_plan(client: ClusterClient, plan: Plan, *, run: Run, offset: int, cluster: Cluster,
                renew: Callable[[], None]) -> tuple[int, KubeError] | None:
    """Apply the plan's objects, one server-side apply each, in waves. Outcomes and versions
    are written together: when the plan is done or stopped, and while it runs at most every
    PROGRESS_SECONDS, so a long plan shows its progress and a short one costs two writes."""
    lease = settings.PROVISIONING_LEASE_SECONDS
    keys = [(obj["apiVersion"], str(ref_of(obj))) for obj in plan.apply]
    known = records.applied_versions(cluster=cluster, refs=keys)
    outcomes: dict[int, tuple[str, int, str]] = {}
    versions: dict[tuple[str, str], str] = {}

    def write_progress() -> None:
        records.record_steps(run=run, outcomes=outcomes)
        records.remember_versions(cluster=cluster, versions=versions)
        outcomes.clear()
        versions.clear()

    renewed_at = written_at = time.monotonic()
    pool = _apply_pool()
    try:
        for wave in apply_waves(plan.apply):
            todo = [p for p in wave if run.steps[offset + p]["outcome"] not in APPLIED]
            futures = {p: pool.submit(apply_object, client, plan.apply[p], known.get(keys[p]))
                       for p in todo}
            errors = []
            for position, future in futures.items():
                try:
                    applied = future.result()
                except KubeError as error:
                    errors.append((offset + position, error))
                    continue
                outcomes[offset + position] = (applied.result, applied.attempts, "")
                versions[keys[position]] = applied.resource_version
            if errors:
                return errors[0]
            if time.monotonic() - written_at > PROGRESS_SECONDS:
                write_progress()
                written_at = time.monotonic()
            # Renewed well before it runs out, not after every wave (a write saved each).
            if time.monotonic() - renewed_at > lease / 3:
                renew()
                renewed_at = time.monotonic()
    finally:
        # Whatever stopped the plan, what was applied is on record: a retry skips it.
        write_progress()
    return None


def _delete_plan(client: ClusterClient, plan: Plan, *, run: Run, offset: int, cluster: Cluster,
                 tenant: str) -> None:
    """Delete in order, each only if Berth's labels say it is this tenant's."""
    for position, ref in enumerate(plan.delete):
        if run.steps[offset + position]["outcome"] in ("deleted", "absent"):
            continue
        _check_owned(client.get(ref), ref, tenant=tenant)
        outcome = client.delete(ref)
        if ref.kind == "Namespace" and not client.wait_until_gone(
            ref, timeout=settings.NAMESPACE_TERMINATION_TIMEOUT
        ):
            raise KubeError(
                f"{ref} is still terminating after "
                f"{settings.NAMESPACE_TERMINATION_TIMEOUT:.0f}s",
                status=None,
                transient=True,
            )
        records.record_step(
            run=run, index=offset + position, outcome=outcome.result, attempts=outcome.attempts
        )
    records.forget_versions(cluster=cluster, refs=[str(ref) for ref in plan.delete])


def _git_failed(*, tenancy_request: Request, run: Run, failure: GitFailure) -> str:
    if failure.transient:
        return wait_for_outage(tenancy_request=tenancy_request, run=run,
                               reason=f"repository unreachable: {failure.message}")
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
        message = (f"{reason}; gave up after waiting since {since:%Y-%m-%d %H:%M} UTC "
                   f"({deadline.total_seconds() / 60:.0f} minutes). Retry when it is back.")
        logger.warning("request %s failed: %s", tenancy_request.pk, message)
        if run is not None:
            stopped = next((i for i, step in enumerate(run.steps)
                            if step["outcome"] == "pending"), None)
            if stopped is not None:
                records.record_step(run=run, index=stopped, outcome="failed", attempts=0,
                                    message=reason)
                message = f"{run.steps[stopped]['object']}: {message}"
            services.mark_failed(run=run, error=message)
            return f"failed: {message}"
        records.stop_waiting(request_id=tenancy_request.pk)
        services.return_to_approval(request_id=tenancy_request.pk, reason=message)
        return f"returned to approval: {message}"
    next_try = now + outage_delay(now - since)
    records.wait(request_id=tenancy_request.pk, since=since, until=next_try, reason=reason)
    logger.warning("request %s waits until %s: %s", tenancy_request.pk,
                   next_try.isoformat(timespec="seconds"), reason)
    return f"waiting: {reason}"


def _refuse_invalid_plan(
    *, tenancy_request: Request, run: Run, problems: dict[str, list[str]]
) -> str:
    """The plan failed validation: fail the request before the first API call or commit,
    each bad object's step saying what is wrong with it."""
    for index, step in enumerate(run.steps):
        if step["object"] in problems:
            message = "; ".join(problems[step["object"]])
            records.record_step(run=run, index=index, outcome="failed", attempts=0, message=message)
    reasons = " | ".join(f"{key}: {'; '.join(found)}" for key, found in problems.items())
    message = f"The plan failed validation, nothing was applied: {reasons}"
    logger.warning("request %s refused before any API call: %s", tenancy_request.pk, reasons)
    services.mark_failed(run=run, error=message)
    return f"failed: {message}"


def apply_object(client: ClusterClient, obj: dict[str, Any],
                 known_version: str | None = None) -> Applied:
    """Server-side apply; a RoleBinding whose roleRef changed (the API refuses to change
    one: a tier moved to another ClusterRole) is deleted and created again."""
    try:
        return client.apply(obj, known_version=known_version)
    except KubeError as error:
        if obj["kind"] != "RoleBinding" or "cannot change roleRef" not in error.message:
            raise
    client.delete(ref_of(obj))
    return replace(client.apply(obj), result="configured")


def _check_owned(live: dict[str, Any] | None, ref, *, tenant: str) -> None:  # noqa: ANN001
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
    if (
        creator.kind in (RequestKind.NAMESPACE, RequestKind.EPHEMERAL)
        and creator.state == RequestState.READY
    ):
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
