"""Applying a batch's plans to a cluster: server-side apply wave by wave, an object several
requests want applied once, outcomes and versions written as they come; and deleting what a
plan removes, only where Berth's labels say it is the tenant's."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from django.conf import settings

from provisioning.kube import Applied, ClusterClient, KubeError
from provisioning.plan import KIND_ORDER, LABEL_TENANT, MANAGED_BY, ref_of
from provisioning.reconcile.batches import Item
from provisioning.records import applied_objects, run_steps
from tenants.models import Cluster

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


def apply_plans(
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


def delete_plan(client: ClusterClient, item: Item, *, cluster: Cluster) -> None:
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
