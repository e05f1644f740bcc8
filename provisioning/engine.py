"""The reconciler: converge a cluster to an approved plan, and find drift afterwards.

Idempotent and safe to re-run at any time: the database says what was approved, the plan
says what that means, and server-side apply makes the cluster match. A worker holds a
lease on the request while it works, so two workers never provision the same request.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from django.conf import settings

from provisioning import services as records
from provisioning.inputs import namespace_input, plan_input_for
from provisioning.kube import ClusterAccess, ClusterClient, KubeError, RetryPolicy, client_for
from provisioning.plan import (
    LABEL_REQUEST,
    LABEL_TENANT,
    MANAGED_BY,
    Plan,
    namespace_objects,
    ref_of,
    render,
)
from tenants import services
from tenants.choices import Decision, NamespaceState, RequestKind, RequestState, RunState
from tenants.models import Cluster, Namespace, Request, Run

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
    records.start_steps(run=run, steps=steps)
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

    if plan.delete:
        for creator in records.mark_namespaces_decommissioning(
            tenancy_request=tenancy_request, inputs=inputs
        ):
            _start_decommission_of(creator, reason=tenancy_request.payload.get("reason", ""))

    client = cluster_client(cluster)
    lease = settings.PROVISIONING_LEASE_SECONDS
    renewed_at = time.monotonic()
    try:
        for index, obj in enumerate(plan.apply):
            if run.steps[index]["outcome"] in ("created", "configured", "unchanged"):
                continue  # reached by an earlier attempt of this run
            outcome = client.apply(obj)
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

    records.record_outcome(tenancy_request=tenancy_request, inputs=inputs)
    services.mark_ready(run=run)
    if plan.delete:
        for creator in _creators_of(inputs.remove_namespaces, tenancy_request):
            _finish_decommission_of(creator)
    return "ready"


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
    # Only a request that made exactly this one namespace follows it into decommissioning.
    if creator.kind == RequestKind.NAMESPACE and creator.state == RequestState.READY:
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
                    client.apply(obj)
                    finding["repaired"] = True
    records.record_drift(namespace=namespace, findings=findings)
    return findings


def active_namespaces():  # noqa: ANN201 - QuerySet[Namespace]
    return Namespace.objects.filter(state=NamespaceState.ACTIVE).select_related(
        "tenant", "tier", "cluster", "project"
    )
