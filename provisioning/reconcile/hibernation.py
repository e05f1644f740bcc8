"""A namespace's sleep, carried out as part of its key's reconcile: where Berth sleeps it
(no kube-green on the cluster), its Deployments and StatefulSets go to zero and its CronJobs
are suspended, each keeping what it had; on waking each gets exactly that back. Either way,
the team's Argo CD Applications and Flux Kustomizations deploying into it pause while it
sleeps and resume (asked to look again at once) when it wakes. The patches are pure
(provisioning.plan.sleep); each is sent at the version it was read at, so a change made
meanwhile is not overwritten (the next reconcile sees it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils import timezone

from provisioning.kube import ClusterClient
from provisioning.plan import (
    FLUX,
    LABEL_TENANT,
    MANAGED_BY,
    ObjectRef,
    PlanInput,
    engine_family,
)
from provisioning.plan.sleep import (
    APPLICATIONS,
    CRONJOBS,
    KUSTOMIZATIONS,
    SLEEP_INFO,
    SLEEP_INFO_KIND,
    WORKLOADS,
    application_patch,
    cronjob_patch,
    kustomization_patch,
    workload_patch,
)
from provisioning.records import sleep as sleep_records
from tenants.models import Namespace

Patcher = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def settle(
    client: ClusterClient,
    namespace: Namespace,
    inputs: PlanInput,
    *,
    causes: list[str],
    look: bool = False,
) -> list[dict[str, Any]]:
    """Put the namespace to sleep or wake it as its spec says; what was changed. A
    namespace without a schedule that the cluster holds asleep (its schedule was removed)
    is woken. An awake namespace the records hold awake is looked at only when `look` (a
    scheduled moment, a wake): a worker that died between patches left annotations to
    restore. Only the namespace's own engine (its project's, else its tenant's) is paused."""
    ns, tenant = inputs.namespaces[0], inputs.tenant
    asleep = ns.sleep is not None and ns.sleep.asleep
    if look and (ns.sleep is None or not ns.sleep.kube_green):
        _remove_sleep_info(client, ns.name, tenant.slug)
    if not (asleep or namespace.asleep or look):
        return []
    now = timezone.now().isoformat()
    targets: list[tuple[str, str, str, Patcher]] = []
    if ns.sleep is None or not ns.sleep.kube_green:  # else kube-green scales them
        targets += [
            (api, kind, ns.name, lambda obj: workload_patch(obj, asleep=asleep))
            for api, kind in WORKLOADS
        ]
        targets.append((*CRONJOBS, ns.name, lambda obj: cronjob_patch(obj, asleep=asleep)))
    if engine_family(inputs.engine) == FLUX:
        targets.append(
            (
                *KUSTOMIZATIONS,
                tenant.gitops_namespace,
                lambda obj: kustomization_patch(obj, asleep=asleep, now=now),
            )
        )
    else:
        targets.append(
            (
                *APPLICATIONS,
                tenant.apps_namespace,
                lambda obj: application_patch(obj, asleep=asleep),
            )
        )
    changes: list[dict[str, Any]] = []
    for api_version, kind, where, patcher in targets:
        if not client.serves(api_version, kind):
            continue
        for live in client.list(api_version, kind, namespace=where):
            if where != ns.name and not _deploys_into(live, kind, ns.name):
                continue
            patch = patcher(live)
            meta = live.get("metadata") or {}
            ref = ObjectRef(api_version, kind, meta.get("name", ""), where)
            if patch is not None and client.merge_patch(
                ref, patch, version=meta.get("resourceVersion", "")
            ):
                changes.append({"object": f"{kind}/{where}/{ref.name}", "status": _said(patch)})
    sleep_records.record_sleep_state(namespace, asleep=asleep, changes=changes, causes=causes)
    return changes


def _remove_sleep_info(client: ClusterClient, namespace: str, tenant: str) -> None:
    """A SleepInfo Berth wrote for a schedule the namespace no longer has (or kube-green's
    leaving it to Berth): gone, so kube-green stops sleeping it."""
    if not client.serves(*SLEEP_INFO_KIND):
        return
    ref = ObjectRef(*SLEEP_INFO_KIND, SLEEP_INFO, namespace)
    labels = ((client.get(ref) or {}).get("metadata") or {}).get("labels") or {}
    if labels.get(MANAGED_BY) == "berth" and labels.get(LABEL_TENANT) == tenant:
        client.delete(ref)


def _deploys_into(obj: dict[str, Any], kind: str, namespace: str) -> bool:
    spec = obj.get("spec") or {}
    if kind == "Application":
        return (spec.get("destination") or {}).get("namespace") == namespace
    return spec.get("targetNamespace") == namespace


def _said(patch: dict[str, Any]) -> str:
    spec = patch.get("spec") or {}
    if "replicas" in spec:
        return f"replicas {spec['replicas']}"
    if "suspend" in spec:
        return "suspended" if spec["suspend"] is True else "suspend as before"
    enabled = ((spec.get("syncPolicy") or {}).get("automated") or {}).get("enabled")
    return f"automated sync {'off' if enabled is False else 'as before'}"
