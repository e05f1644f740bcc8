"""The reconcile of a namespace key: what the records want of the namespace (its pinned
definitions; a request carrying out a change of them), compared with the cluster by the one
comparison (provisioning.plan.compare), and made to match, behind every check
(reconcile.gates), each change it makes written to the audit log with its causes."""

from __future__ import annotations

import logging
from typing import Any

from provisioning.inputs import namespace_input
from provisioning.kube import ClusterClient, KubeError, cluster_client
from provisioning.plan import (
    LABEL_ACCESS_GRANT,
    LABEL_TENANT,
    MANAGED_BY,
    ObjectRef,
    namespace_objects,
    ref_of,
)
from provisioning.plan.compare import object_finding, unexpected
from provisioning.reconcile import hibernation
from provisioning.reconcile.applying import apply_object
from provisioning.reconcile.gates import cluster_gate, merge_gate
from provisioning.reconcile.keys import Key
from provisioning.reconcile.queue import Cause
from provisioning.records import access, observations
from tenants import audit
from tenants.choices import NamespaceState
from tenants.conditions import Outcome, Reason, conditions_for, failed, idle, ready, waiting
from tenants.models import Namespace

logger = logging.getLogger(__name__)

# Causes that change desired state on purpose: applied whatever the tier says of drift.
# Drift (the watcher's, the sweep's) is repaired only where the tier says so.
FORCING = frozenset({"campaign", "rollback", "repair", "token", "grant"})
# Objects Berth labelled as the tenant's in the namespace but no longer planned are
# deleted only when a rollback asks (a campaign added them); drift reports them.
PRUNING = frozenset({"rollback"})
# Causes that are a sleep schedule's moment or a wake on demand.
SLEEPING = frozenset({"sleep", "wake"})


def namespace_of(key: Key) -> Namespace | None:
    return (
        Namespace.objects.filter(cluster__name=key.cluster, name=key.name)
        .exclude(state=NamespaceState.DECOMMISSIONED)
        .select_related("tenant", "tier", "tier_revision", "cluster", "project")
        .first()
    )


def find_drift(
    namespace: Namespace,
    desired: list[dict[str, Any]],
    client: ClusterClient,
    only: frozenset[str] = frozenset(),
    strays: dict[str, ObjectRef] | None = None,
) -> list[dict[str, Any]]:
    """Live objects of one namespace against the desired ones: missing, changed,
    unexpected (labelled as the tenant's but not planned; their refs put in `strays`).
    `only`: those objects alone (what a watch event named), else all of them, with a list
    per kind for the unexpected."""
    findings, wanted = [], set()
    for obj in desired:
        ref = ref_of(obj)
        wanted.add(str(ref))
        if only and str(ref) not in only:
            continue
        finding = object_finding(obj, client.get(ref))
        if finding is not None:
            findings.append(finding)
    for ref in sorted(only - wanted):  # not planned: an access binding that should be gone?
        found = _grant_stray(client, namespace, ref)
        if found is not None:
            findings.append(found[0])
            if strays is not None:
                strays[ref] = found[1]
    if only:
        return findings
    selector = f"{MANAGED_BY}=berth,{LABEL_TENANT}={namespace.tenant.slug}"
    for api_version, kind in sorted(
        {(o["apiVersion"], o["kind"]) for o in desired if o["kind"] != "Namespace"}
    ):
        for live in client.list(
            api_version, kind, namespace=namespace.name, label_selector=selector
        ):
            found = unexpected(api_version, kind, live)
            if LABEL_ACCESS_GRANT in ((live.get("metadata") or {}).get("labels") or {}):
                found["grant"] = True
            if found["object"] not in wanted:
                findings.append(found)
                if strays is not None:
                    strays[found["object"]] = ref_of(
                        {**live, "apiVersion": api_version, "kind": kind}
                    )
    return findings


def reconcile_namespace(
    key: Key, causes: tuple[Cause, ...], *, only: frozenset[str] = frozenset()
) -> tuple[Outcome, list[dict[str, Any]]]:
    """Make the namespace what its records say, where its tier or the causes say so; the
    outcome, and what was found (each marked `repaired` where it was put right)."""
    namespace = namespace_of(key)
    if namespace is None:
        return idle(f"{key} is not a namespace of Berth's"), []
    if namespace.state != NamespaceState.ACTIVE:
        # Made or removed by the request carrying it out (its run holds the key).
        return idle(f"{namespace.name} is {namespace.state}: its request carries it out"), []
    if namespace.cluster.plan_only:
        return ready("plan-only cluster", Reason.PLAN_ONLY), []
    kinds = {cause.kind for cause in causes}
    repairing = bool(kinds & FORCING) or namespace.tier.auto_repair_drift
    inputs = namespace_input(namespace)
    desired = namespace_objects(inputs, inputs.namespaces[0])
    by_ref = {str(ref_of(obj)): obj for obj in desired}
    # A sleeping or waking moment alone checks only what sleep needs (kube-green's schedule):
    # the watcher and the sweep keep the rest, and a moment may come for hundreds at once.
    checking = True
    if kinds and kinds <= SLEEPING and not only:
        only = frozenset(ref for ref, obj in by_ref.items() if obj["kind"] == "SleepInfo")
        checking = bool(only)
    findings: list[dict[str, Any]] = []
    try:
        client = cluster_client(namespace.cluster)
        strays: dict[str, ObjectRef] = {}
        if checking:
            findings = find_drift(namespace, desired, client, only, strays)
        # A right that has ended goes whatever else waits: removing it widens nothing.
        for finding in [f for f in findings if f.get("grant")]:
            _put_right(client, finding, None, strays.get(finding["object"]), namespace)
        changing = [f for f in findings if _changes(f, repairing, kinds)]
        gate = None
        if changing:
            gate = merge_gate(namespace) or cluster_gate(namespace.cluster, client)
        if gate is None:
            for finding in changing:
                ref = finding["object"]
                _put_right(client, finding, by_ref.get(ref), strays.get(ref), namespace)
        if not only or kinds & SLEEPING:  # a watch event of one object leaves sleep be
            hibernation.settle(
                client,
                namespace,
                inputs,
                causes=[str(cause) for cause in causes],
                look=bool(kinds & SLEEPING),
            )
    except KubeError as error:
        outcome = (
            waiting(Reason.CLUSTER_UNREACHABLE, f"{namespace.cluster.name}: {error.message}")
            if error.transient
            else failed(Reason.REFUSED, error.message)
        )
        _leave(namespace, outcome)
        return outcome, []
    if checking and only:
        for ref in only:
            observations.record_object_drift(
                namespace_id=namespace.pk,
                ref=ref,
                finding=next((f for f in findings if f["object"] == ref), None),
            )
    elif checking:
        observations.record_drift(namespace=namespace, findings=findings)
    done = [f for f in findings if f.get("repaired") or f.get("deleted")]
    if checking:
        access.grants_ended(
            namespace=namespace,
            removed=[f["object"] for f in done if f.get("grant")],
            all_checked=not only,
            causes=[str(cause) for cause in causes],
        )
    if done:
        audit.record(
            actor=None,
            action="namespace.reconciled",
            obj=namespace,
            tenant_id=namespace.tenant_id,
            after={
                "causes": [str(cause) for cause in causes],
                "changes": [
                    {k: f[k] for k in ("object", "status", "detail") if k in f} for f in done
                ],
            },
        )
    outcome = gate or ready()
    _leave(namespace, outcome)
    return outcome, findings


def _grant_stray(
    client: ClusterClient, namespace: Namespace, ref: str
) -> tuple[dict[str, Any], ObjectRef] | None:
    """The binding `ref` names, when it is an access grant's of this tenant that the
    namespace no longer plans (re-created by hand after its grant ended, say)."""
    kind, _, rest = ref.partition("/")
    where, _, name = rest.rpartition("/")
    if kind != "RoleBinding" or where != namespace.name:
        return None
    stray = ObjectRef("rbac.authorization.k8s.io/v1", "RoleBinding", name, where)
    live = client.get(stray)
    labels = ((live or {}).get("metadata") or {}).get("labels") or {}
    if live is None or LABEL_ACCESS_GRANT not in labels:
        return None
    if labels.get(MANAGED_BY) != "berth" or labels.get(LABEL_TENANT) != namespace.tenant.slug:
        return None
    return {**unexpected(stray.api_version, kind, live), "grant": True}, stray


def _changes(finding: dict[str, Any], repairing: bool, kinds: set[str]) -> bool:
    if finding.get("grant"):
        return False  # removed before the gates (reconcile_namespace)
    if finding["status"] == "unexpected":
        return bool(kinds & PRUNING)
    # The schedule kube-green keeps is Berth's clock, not the team's: always put back.
    return repairing or finding["object"].startswith("SleepInfo/")


def _put_right(
    client: ClusterClient,
    finding: dict[str, Any],
    desired: dict[str, Any] | None,
    stray: ObjectRef | None,
    namespace: Namespace,
) -> None:
    """Apply what is missing or changed; delete a stray only while Berth's labels say it is
    this tenant's (they were read by the list that found it, and are read again here)."""
    if stray is not None:
        labels = ((client.get(stray) or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(MANAGED_BY) == "berth" and labels.get(LABEL_TENANT) == namespace.tenant.slug:
            client.delete(stray)
            finding["deleted"] = True
        return
    if desired is not None:
        apply_object(client, desired)
        finding["repaired"] = True


def _leave(namespace: Namespace, outcome: Outcome) -> None:
    Namespace.objects.filter(pk=namespace.pk).update(
        conditions=conditions_for(outcome, namespace.conditions)
    )
