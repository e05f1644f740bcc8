"""The reconciler: converge a cluster to an approved plan, and find drift afterwards.

Idempotent and safe to re-run at any time: the database says what was approved, the plan
says what that means, and server-side apply makes the cluster match. A worker holds a
lease on the request while it works, so two workers never provision the same request.
Once the cluster matches, the tenant's GitOps repository is brought in step in one commit
(`write_gitops`): the last step of every run.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings

from provisioning import gitops, gitops_plan
from provisioning import selectors as reads
from provisioning import services as records
from provisioning.guardrails import validate_plan
from provisioning.inputs import gitops_input_for, namespace_input, plan_input_for
from provisioning.kube import (
    ClusterAccess,
    ClusterClient,
    KubeError,
    Outcome,
    RetryPolicy,
    client_for,
)
from provisioning.models import GitCommit
from provisioning.plan import (
    LABEL_REQUEST,
    LABEL_TENANT,
    MANAGED_BY,
    Plan,
    PlanInput,
    namespace_objects,
    ref_of,
    render,
)
from provisioning.signals import git_push_failed
from tenants import services
from tenants.choices import Decision, NamespaceState, RequestKind, RequestState, RunState
from tenants.models import Cluster, Namespace, Request, Run, Tenant

logger = logging.getLogger(__name__)


def retry_policy() -> RetryPolicy:
    return RetryPolicy(
        attempts=settings.KUBE_MAX_ATTEMPTS,
        initial_seconds=settings.KUBE_BACKOFF_SECONDS,
        max_seconds=max(settings.KUBE_BACKOFF_SECONDS * 20, 1.0),
        timeout_seconds=settings.KUBE_TIMEOUT_SECONDS,
    )


def cluster_access(cluster: Cluster) -> ClusterAccess:
    fingerprint = hashlib.sha256(
        f"{cluster.api_url}|{cluster.auth_method}|{cluster.credentials}|{cluster.ca_certificate}".encode()
    ).hexdigest()[:16]
    return ClusterAccess(
        key=f"{cluster.pk}:{fingerprint}",
        api_url=cluster.api_url,
        auth_method=cluster.auth_method,
        credentials=cluster.credentials,
        ca_certificate=cluster.ca_certificate,
    )


def cluster_client(cluster: Cluster) -> ClusterClient:
    return client_for(cluster_access(cluster), retry_policy())


def current_plan(tenancy_request: Request) -> Plan:
    return render(plan_input_for(tenancy_request))


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
        if approved and approved != plan.digest:
            services.return_to_approval(
                request_id=request_id,
                reason="The plan changed after approval (a tier preset, the tenant or its "
                "namespaces changed); it needs a new approval.",
            )
            return "plan changed: returned to approval"
        run = services.start_provisioning(request_id=request_id, plan_digest=plan.digest)
    elif tenancy_request.state == RequestState.PROVISIONING:
        # A previous worker died mid-run, or an admin pressed Retry: continue its run.
        run = tenancy_request.runs.filter(state=RunState.RUNNING).first()
        if run is None:
            return "nothing to do: no open run"
    else:
        return f"nothing to do: request is {tenancy_request.state}"

    return _execute(
        tenancy_request=tenancy_request, run=run, inputs=inputs, plan=plan, worker=worker
    )


def _execute(*, tenancy_request: Request, run: Run, inputs, plan: Plan, worker: str) -> str:  # noqa: ANN001
    cluster = Cluster.objects.get(name=inputs.cluster.name)
    steps = [records.step_row(ref_of(obj), "apply") for obj in plan.apply]
    steps += [records.step_row(ref, "delete") for ref in plan.delete]
    steps.append(gitops_step_row(tenancy_request.tenant.gitops_repo_url))
    records.start_steps(run=run, steps=steps)
    # Validate before create: a plan with one bad object creates nothing anywhere.
    problems = validate_plan(plan, inputs)
    if problems:
        return _refuse_invalid_plan(tenancy_request=tenancy_request, run=run, problems=problems)
    records.record_namespaces_pending(tenancy_request=tenancy_request, inputs=inputs)

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
            _start_decommission_of(creator, reason=reason)
    ending = records.environment_ended_by(tenancy_request)
    if ending is not None:
        # The environment's own request follows it, whether or not its namespace goes too.
        cause = tenancy_request.payload.get("cause", "")
        _start_decommission_of(
            ending.request_id, reason=reason or f"Environment {ending.slug} ended ({cause})."
        )

    client = cluster_client(cluster)
    lease = settings.PROVISIONING_LEASE_SECONDS
    renewed_at = time.monotonic()
    try:
        for index, obj in enumerate(plan.apply):
            if run.steps[index]["outcome"] in ("created", "configured", "unchanged"):
                continue  # reached by an earlier attempt of this run
            outcome = apply_object(client, obj)
            records.record_step(
                run=run, index=index, outcome=outcome.result, attempts=outcome.attempts
            )
            # Renewed well before it runs out, not after every object (one write saved each).
            if time.monotonic() - renewed_at > lease / 3:
                records.renew_lease(request_id=tenancy_request.pk, owner=worker, seconds=lease)
                renewed_at = time.monotonic()
        offset = len(plan.apply)
        for position, ref in enumerate(plan.delete):
            _check_owned(client.get(ref), ref, tenant=inputs.tenant.slug)
            outcome = client.delete(ref)
            if not client.wait_until_gone(ref, timeout=settings.NAMESPACE_TERMINATION_TIMEOUT):
                raise KubeError(
                    f"{ref} is still terminating after "
                    f"{settings.NAMESPACE_TERMINATION_TIMEOUT:.0f}s",
                    status=None,
                    transient=True,
                )
            records.record_step(
                run=run, index=offset + position, outcome=outcome.result, attempts=outcome.attempts
            )
    except KubeError as error:
        failed = next(i for i, step in enumerate(run.steps) if step["outcome"] == "pending")
        records.record_step(
            run=run, index=failed, outcome="failed", attempts=error.attempts, message=error.message
        )
        message = f"{run.steps[failed]['object']}: {error.message}"
        if error.transient:
            message += f" (gave up after {error.attempts} attempts)"
        logger.warning("request %s failed: %s", tenancy_request.pk, message)
        services.mark_failed(run=run, error=message)
        return f"failed: {message}"

    records.renew_lease(request_id=tenancy_request.pk, owner=worker, seconds=lease)
    failure = _gitops_step(tenancy_request=tenancy_request, run=run, inputs=inputs)
    if failure:
        services.mark_failed(run=run, error=failure)
        return f"failed: {failure}"

    records.record_outcome(tenancy_request=tenancy_request, inputs=inputs)
    services.mark_ready(run=run)
    if plan.delete:
        for creator in _creators_of(inputs.remove_namespaces, tenancy_request):
            _finish_decommission_of(creator)
    if ending is not None:
        _finish_decommission_of(ending.request_id)
    return "ready"


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


def apply_object(client: ClusterClient, obj: dict[str, Any]) -> Outcome:
    """Server-side apply; a RoleBinding whose roleRef changed (Kubernetes refuses to change
    one: a tier moved to another ClusterRole) is deleted and created again."""
    if obj["kind"] == "RoleBinding":
        ref = ref_of(obj)
        live = client.get(ref)
        wanted = obj["roleRef"]
        had = (live or {}).get("roleRef") or {}
        if live is not None and (had.get("kind"), had.get("name")) != (
            wanted["kind"],
            wanted["name"],
        ):
            client.delete(ref)
            return replace(client.apply(obj), result="configured")
    return client.apply(obj)


# --- GitOps ----------------------------------------------------------------------------

GITOPS_DONE = ("committed", "unchanged", "skipped")


def gitops_step_row(repo_url: str) -> dict[str, Any]:
    """The run's last step: one commit to the tenant's repository (or why there is none)."""
    where = gitops.display_url(repo_url) or "(no repository)"
    return {
        "object": f"GitOps commit {where}",
        "kind": "GitOps",
        "namespace": "",
        "name": where,
        "action": "commit",
        "outcome": "pending",
        "attempts": 0,
        "message": "",
    }


def _gitops_step(*, tenancy_request: Request, run: Run, inputs: PlanInput) -> str:
    """Run the GitOps step unless an earlier attempt finished it; "" or why it failed."""
    index = len(run.steps) - 1
    if run.steps[index]["outcome"] in GITOPS_DONE:
        return ""
    try:
        written = write_gitops(request_id=tenancy_request.pk, inputs=inputs)
    except (gitops.GitError, ValueError) as error:
        attempts = getattr(error, "attempts", 1)
        message = getattr(error, "message", str(error))
        records.record_step(
            run=run, index=index, outcome="failed", attempts=attempts, message=message
        )
        failure = f"{run.steps[index]['object']}: {message}"
        if getattr(error, "transient", False):
            failure += f" (gave up after {attempts} attempts)"
        logger.warning("request %s failed: %s", tenancy_request.pk, failure)
        git_push_failed.send(sender=Request, request_id=tenancy_request.pk)
        return failure
    records.record_step(
        run=run,
        index=index,
        outcome=written.outcome,
        attempts=written.attempts,
        message=written.message,
    )
    return ""


@dataclass(frozen=True)
class GitOpsWritten:
    outcome: str  # committed | unchanged | skipped
    message: str
    attempts: int = 0
    commit: GitCommit | None = None


def gitops_remote(tenant: Tenant) -> gitops.Remote:
    return gitops.Remote.parse(
        tenant.gitops_repo_url, branch=tenant.gitops_branch, credentials=tenant.gitops_credentials
    )


def write_gitops(*, request_id: int, inputs: PlanInput | None = None) -> GitOpsWritten:
    """Bring the tenant's repository in step with the application this request touches,
    in one commit (none when it already is), and record the commit. Raises GitError (or
    ValueError when the files cannot be rendered)."""
    tenancy_request = Request.objects.select_related("tenant").get(pk=request_id)
    tenant = tenancy_request.tenant
    if tenancy_request.kind == RequestKind.QUOTA_CHANGE:
        # Quotas are Berth's, never in the repository: nothing there depends on them.
        return GitOpsWritten("skipped", "a quota change changes no GitOps file")
    if not tenant.gitops_repo_url.strip():
        return GitOpsWritten(
            "skipped", f"tenant {tenant.slug} has no GitOps repository configured: nothing written"
        )
    inputs = inputs or plan_input_for(tenancy_request)
    remote = gitops_remote(tenant)
    template = settings.BERTH_GITOPS_IMAGE_REPOSITORY
    approvers = reads.approvers_of(tenancy_request)
    own = [ns.name for ns in inputs.namespaces] + list(inputs.remove_namespaces)
    if tenancy_request.kind in (RequestKind.EPHEMERAL, RequestKind.END_ENVIRONMENT):
        own = [tenancy_request.payload["namespace"]]
    earlier: list[tuple[str, str, dict[str, str]]] = []
    notes: list[str] = []

    def propose(checkout: gitops.Checkout) -> gitops.Proposal:
        # Read under the repository lock: a later writer sees what an earlier one wrote.
        desired = gitops_input_for(tenancy_request, inputs)
        within = gitops_plan.scope(desired)
        current = checkout.read(within)
        rendered = gitops_plan.render_files(desired, image_repository_template=template)
        converged = gitops_plan.converge(current, rendered, within)
        changed = gitops_plan.changes(current, converged.files)
        notes[:] = converged.notes
        if not changed and not GitCommit.objects.filter(request=tenancy_request).exists():
            # Pushed by an attempt that died before recording it: record it now.
            found = checkout.find_commit(tenancy_request.pk)
            earlier[:] = [found] if found else []
        message = gitops_plan.commit_message(
            kind=tenancy_request.kind,
            request_id=tenancy_request.pk,
            tenant=tenant.slug,
            app=desired.app,
            engine=desired.engine,
            namespaces=own,
            changed=changed,
            notes=converged.notes,
            approvers=approvers,
            reason=str(tenancy_request.payload.get("reason", "")),
            environment=str(tenancy_request.payload.get("env_slug", "")),
        )
        return gitops.Proposal(current=current, files=converged.files, message=message)

    result = gitops.write(remote, propose)
    proposal = result.proposal
    left = "".join(f"; left {note}" for note in notes)
    if result.outcome == "committed":
        changed = gitops_plan.changes(proposal.current, proposal.files)
        commit = _record_commit(
            tenancy_request,
            inputs,
            remote,
            sha=result.sha,
            message=proposal.message,
            diff=gitops_plan.diff_files(proposal.current, proposal.files),
            files=changed,
            pushes=result.pushes,
        )
        kinds = list(changed.values())
        summary = ", ".join(
            f"{kinds.count(kind)} {kind}"
            for kind in ("added", "modified", "deleted")
            if kinds.count(kind)
        )
        return GitOpsWritten(
            "committed",
            f"{result.sha[:12]} pushed to {remote.branch}: {summary}{left}",
            result.attempts,
            commit,
        )
    if earlier:
        sha, diff, files = earlier[0]
        commit = _record_commit(
            tenancy_request, inputs, remote, sha=sha, message="", diff=diff, files=files, pushes=0
        )
        return GitOpsWritten(
            "committed",
            f"{sha[:12]} was pushed by an earlier attempt{left}",
            result.attempts,
            commit,
        )
    at = f" (at {result.sha[:12]})" if result.sha else ""
    return GitOpsWritten(
        "unchanged", f"{remote.branch} already holds these files{at}{left}", result.attempts
    )


def _record_commit(
    tenancy_request: Request, inputs: PlanInput, remote: gitops.Remote, **fields: Any
) -> GitCommit:
    commit = GitCommit.objects.create(
        request=tenancy_request, repo_url=remote.url, branch=remote.branch, **fields
    )
    names = [ns.name for ns in inputs.namespaces] + list(inputs.remove_namespaces)
    commit.namespaces.set(
        Namespace.objects.filter(
            tenant=tenancy_request.tenant, cluster__name=inputs.cluster.name, name__in=names
        ).exclude(state=NamespaceState.DECOMMISSIONED)
    )
    return commit


def gitops_preview(tenancy_request: Request) -> str:
    """The GitOps file changes approving this request would push, as a unified diff
    against the repository's current content (reads the remote; no lock, no commit)."""
    tenant = tenancy_request.tenant
    if not tenant.gitops_repo_url.strip():
        return ""
    desired = gitops_input_for(tenancy_request, plan_input_for(tenancy_request))
    within = gitops_plan.scope(desired)
    current = gitops.read_files(gitops_remote(tenant), within)
    rendered = gitops_plan.render_files(
        desired, image_repository_template=settings.BERTH_GITOPS_IMAGE_REPOSITORY
    )
    return gitops_plan.diff_files(current, gitops_plan.converge(current, rendered, within).files)


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


def _start_decommission_of(request_id: int, *, reason: str) -> None:
    creator = Request.objects.get(pk=request_id)
    # Only a request that made exactly this one namespace (or environment) follows it.
    if (
        creator.kind in (RequestKind.NAMESPACE, RequestKind.EPHEMERAL)
        and creator.state == RequestState.READY
    ):
        services.start_decommission(request_id=request_id, actor=None, reason=reason)


def _creators_of(names: tuple[str, ...], tenancy_request: Request) -> list[int]:
    return list(
        Namespace.objects.filter(tenant=tenancy_request.tenant, name__in=names)
        .exclude(request=None)
        .values_list("request_id", flat=True)
    )


def _finish_decommission_of(request_id: int) -> None:
    if Request.objects.filter(pk=request_id, state=RequestState.DECOMMISSIONING).exists():
        services.mark_decommissioned(request_id=request_id)


# --- drift -----------------------------------------------------------------------------


def _differences(desired: Any, live: Any, path: str = "") -> list[str]:
    """Where live differs from desired, looking only at what Berth sets."""
    if isinstance(desired, dict):
        if not isinstance(live, dict):
            return [path or "."]
        found = []
        for key, value in desired.items():
            found += _differences(value, live.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(desired, list):
        if not isinstance(live, list) or len(live) != len(desired):
            return [path]
        found = []
        for index, (want, have) in enumerate(zip(desired, live, strict=True)):
            found += _differences(want, have, f"{path}[{index}]")
        return found
    return [] if desired == live or str(desired) == str(live) else [path]


def find_drift(
    namespace: Namespace, desired: list[dict[str, Any]], client: ClusterClient
) -> list[dict[str, Any]]:
    """Compare live objects of one namespace with the desired ones: missing, changed,
    unexpected (labelled as Berth's but not in the plan)."""
    findings = []
    wanted = set()
    for obj in desired:
        ref = ref_of(obj)
        wanted.add((ref.kind, ref.name))
        live = client.get(ref)
        if live is None:
            findings.append({"object": str(ref), "status": "missing", "detail": ""})
            continue
        changed = _differences({k: v for k, v in obj.items() if k != "metadata"}, live)
        # Which request last applied an object is bookkeeping, not drift.
        labels = {k: v for k, v in obj["metadata"].get("labels", {}).items() if k != LABEL_REQUEST}
        changed += _differences(labels, live["metadata"].get("labels") or {}, "metadata.labels")
        if changed:
            findings.append(
                {"object": str(ref), "status": "changed", "detail": ", ".join(sorted(changed))}
            )
    selector = f"{MANAGED_BY}=berth,{LABEL_TENANT}={namespace.tenant.slug}"
    for api_version, kind in sorted(
        {(o["apiVersion"], o["kind"]) for o in desired if o["kind"] != "Namespace"}
    ):
        for live in client.list(
            api_version, kind, namespace=namespace.name, label_selector=selector
        ):
            if (kind, live["metadata"]["name"]) not in wanted:
                ref = ref_of({**live, "apiVersion": api_version, "kind": kind})
                findings.append({"object": str(ref), "status": "unexpected", "detail": ""})
    return findings


def reconcile_namespace(namespace: Namespace) -> list[dict[str, Any]]:
    """Record drift for one active namespace; repair it when its tier says so."""
    if namespace.cluster.plan_only:
        return []
    inputs = namespace_input(namespace)
    desired = namespace_objects(inputs, inputs.namespaces[0])
    client = cluster_client(namespace.cluster)
    findings = find_drift(namespace, desired, client)
    if findings and namespace.tier.auto_repair_drift:
        for obj in desired:
            ref = str(ref_of(obj))
            for finding in findings:
                if finding["object"] == ref and finding["status"] in ("missing", "changed"):
                    apply_object(client, obj)
                    finding["repaired"] = True
    records.record_drift(namespace=namespace, findings=findings)
    return findings


def active_namespaces():  # noqa: ANN201 - QuerySet[Namespace]
    return Namespace.objects.filter(state=NamespaceState.ACTIVE).select_related(
        "tenant", "tier", "cluster", "project"
    )
