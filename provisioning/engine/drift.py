"""Drift: compare what Berth applied with what the cluster holds, record it, and repair it
where the tier says so (run by beat's reconcile job).
"""

from __future__ import annotations

from typing import Any

from provisioning import services as records
from provisioning.engine.clusters import cluster_client
from provisioning.engine.runs import apply_object
from provisioning.inputs import namespace_input
from provisioning.kube import ClusterClient
from provisioning.plan import LABEL_REQUEST, LABEL_TENANT, MANAGED_BY, namespace_objects, ref_of
from tenants.choices import NamespaceState
from tenants.models import Namespace


def differences(desired: Any, live: Any, path: str = "") -> list[str]:
    """Where live differs from desired, looking only at what Berth sets."""
    if isinstance(desired, dict):
        if not isinstance(live, dict):
            return [path or "."]
        found = []
        for key, value in desired.items():
            found += differences(value, live.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(desired, list):
        if not isinstance(live, list) or len(live) != len(desired):
            return [path]
        found = []
        for index, (want, have) in enumerate(zip(desired, live, strict=True)):
            found += differences(want, have, f"{path}[{index}]")
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
        changed = differences({k: v for k, v in obj.items() if k != "metadata"}, live)
        # Which request last applied an object is bookkeeping, not drift.
        labels = {k: v for k, v in obj["metadata"].get("labels", {}).items() if k != LABEL_REQUEST}
        changed += differences(labels, live["metadata"].get("labels") or {}, "metadata.labels")
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
    """Record drift for one active namespace against the definition it runs (a tier edited
    since is an upgrade, rolled out by a campaign, never by repair); repair it when its
    tier says so."""
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
        "tenant", "tier", "tier_revision", "cluster", "project"
    )
