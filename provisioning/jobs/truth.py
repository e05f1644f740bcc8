"""The truth table: for every object Berth owns for a tenant, what the database says should
exist, what the tenant's repository holds and what the cluster holds, and one state.

Desired state comes from the code that provisions: the cluster objects a tenant_sync would
apply now (`inputs.kept_input`, `plan.render`), the files its GitOps commit would leave
(`commits.propose_files` for the same tenant_sync, read against the branch as it is). The
states:

    in_sync             all three agree
    drifted             the cluster (or the file) differs from what Berth would make it
    missing_in_git      Berth would write the file and the branch lacks it
    missing_in_cluster  Berth would apply the object and the cluster lacks it
    orphan              labelled or headed as Berth's, with no owner in the database

Where the cluster's drift watcher is healthy, the objects it watches in the tenant's
namespaces are answered from its record (cluster_rows, `watched`) instead of one GET each.

For the objects a GitOps engine applies (Argo CD Applications, Flux Kustomizations, Kargo
Stages, from the plan or from the repository's files) the live sync status is read too.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.utils import timezone

from provisioning import gitops, gitops_plan
from provisioning.inputs import clusters_of, kept_input
from provisioning.jobs.truth_rows import (
    DRIFTED,
    IN_SYNC,
    MISSING_IN_CLUSTER,
    MISSING_IN_GIT,
    ORPHAN,
    STATES,
    WATCHED,
    table_row,
    watched_orphans,
    watched_row,
    watcher_findings,
)
from provisioning.jobs.watch_lock import watched_clusters
from provisioning.kube import FIELD_MANAGER, ClusterClient, KubeError, cluster_client
from provisioning.plan import (
    LABEL_REQUEST,
    LABEL_TENANT,
    MANAGED_BY,
    ObjectRef,
    ref_of,
    render,
    repo_root,
)
from provisioning.plan.compare import object_finding
from provisioning.reconcile.proposals import gitops_remote, proposed_sync
from provisioning.records import observations
from tenants.models import Tenant

# Kinds whose live status says whether a GitOps engine applied what it reads.
# The kinds Berth's RBAC (the Helm chart) lets it list, as drift does: orphans of the others
# (get-only for Berth: Secrets and Roles by name, Argo CD, Kargo, Flux) are not looked for.
LISTED_KINDS = frozenset(
    {"ConfigMap", "ResourceQuota", "LimitRange", "ServiceAccount", "NetworkPolicy", "RoleBinding"}
)
ENGINE_KINDS = {
    ("argoproj.io", "Application"),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"),
    ("kargo.akuity.io", "Stage"),
}


def take(tenant: Tenant) -> dict[str, Any]:
    """Compare and record the tenant's truth table; returns what was recorded."""
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    branch: dict[str, str] | None = None
    head = ""
    if tenant.gitops_repo_url.strip():
        root = repo_root(tenant.gitops_path)
        try:
            head, branch = gitops.read_snapshot_if_moved(
                gitops_remote(tenant), (f"{root}apps/", f"{root}clusters/")
            )
        except gitops.GitError as error:
            problems.append(f"the repository could not be read: {error.message}")
    expected: dict[str, tuple[str, str, str]] = {}  # path -> (cluster, content, GitOps engine)
    watched = watched_clusters()
    for cluster in clusters_of(tenant):
        if cluster.plan_only:
            continue
        inputs = kept_input(tenant, cluster)
        client: ClusterClient | None = cluster_client(cluster)
        seen = watcher_findings(tenant, cluster.pk) if cluster.pk in watched else {}
        try:
            rows += cluster_rows(
                tenant, cluster.name, list(render(inputs).apply), client, watched=seen
            )
        except KubeError as error:
            problems.append(f"{cluster.name}: the cluster could not be read: {error.message}")
            client = None
        if branch is not None:
            proposed = proposed_sync(tenant, cluster, branch, inputs)
            statuses = _live_engine_objects(proposed.files, client)
            for path, content in proposed.files.items():
                expected.setdefault(path, (cluster.name, content, statuses.get(path, "")))
    if branch is not None:
        rows += git_rows(head, branch, expected)
    table = {
        "taken_at": timezone.now().isoformat(),
        "rows": rows,
        "counts": {state: sum(row["state"] == state for row in rows) for state in STATES},
        "problems": problems,
    }
    observations.record_truth(tenant=tenant, table=table)
    return table


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:12]


def _wanted(obj: dict[str, Any]) -> dict[str, Any]:
    # Which request last applied an object is bookkeeping, not part of what should exist.
    labels = {k: v for k, v in obj["metadata"].get("labels", {}).items() if k != LABEL_REQUEST}
    return {**obj, "metadata": {**obj["metadata"], "labels": labels}}


def berth_owns_fields(live: dict[str, Any]) -> bool:
    return any(
        entry.get("manager") == FIELD_MANAGER
        for entry in live["metadata"].get("managed_fields")
        or live["metadata"].get("managedFields")
        or []
    )


def engine_status(obj: dict[str, Any] | None) -> str:
    """What the GitOps engine reports of an object it reconciles, in its own words."""
    if not obj:
        return ""
    status = obj.get("status") or {}
    kind = obj.get("kind", "")
    if kind == "Application":
        sync = (status.get("sync") or {}).get("status")
        health = (status.get("health") or {}).get("status")
        if sync or health:
            return f"{sync or 'unknown'} / {health or 'unknown'}"
    else:  # Flux Kustomization, Kargo Stage: the Ready condition
        for condition in status.get("conditions") or []:
            if condition.get("type") == "Ready":
                reason = condition.get("reason") or condition.get("message") or ""
                word = "Ready" if condition.get("status") == "True" else "Not ready"
                return f"{word}: {reason}" if reason else word
    return "no status reported yet"


def cluster_rows(
    tenant: Tenant,
    cluster: str,
    desired: list[dict[str, Any]],
    client: ClusterClient,
    *,
    watched: dict[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per object the plan applies, then one per orphan found beside them.

    `watched`: the findings a healthy watcher recorded, per namespace. The watcher compares
    every event of the kinds it watches with the namespace's plan as it happens, so those
    objects are answered from its record, with no call to the cluster; the rest (the
    tenant's own objects outside its namespaces, a handful however many namespaces it has)
    are read one by one."""
    watched = watched or {}
    rows = []
    wanted: set[tuple[str, str, str]] = set()
    for obj in desired:
        ref = ref_of(obj)
        wanted.add((ref.kind, ref.namespace or "", ref.name))
        want = _wanted(obj)
        # A Namespace is filed under itself: "this namespace's objects" include it.
        home = ref.name if ref.kind == "Namespace" else ref.namespace or ""
        common = {"namespace": home, "db": f"plan {_digest(want)}"}
        if home in watched and ref.kind in WATCHED:
            rows.append(watched_row(cluster, str(ref), watched[home], common))
            continue
        live = client.get(ref)
        if live is None:
            rows.append(
                table_row("cluster", cluster, str(ref), MISSING_IN_CLUSTER, live="absent", **common)
            )
            continue
        finding = object_finding(obj, live)  # the comparison the reconcile makes
        changed = finding["detail"].split(", ") if finding else []
        owned = (
            "present, Berth's fields" if berth_owns_fields(live) else "present; Berth owns no field"
        )
        status = (
            engine_status({**live, "kind": ref.kind})
            if (ref.api_version.split("/")[0], ref.kind) in ENGINE_KINDS
            else ""
        )
        rows.append(
            table_row(
                "cluster",
                cluster,
                str(ref),
                DRIFTED if changed else IN_SYNC,
                live=owned,
                engine=status,
                detail=", ".join(sorted(changed)),
                **common,
            )
        )
    rows += _cluster_orphans(tenant, cluster, desired, wanted, client, watched)
    return rows


def _cluster_orphans(
    tenant: Tenant,
    cluster: str,
    desired: list[dict[str, Any]],
    wanted: set[tuple[str, str, str]],
    client: ClusterClient,
    watched: dict[str, list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Objects labelled as Berth's for this tenant that no plan applies: namespaces, and
    in each of the tenant's namespaces, objects of the kinds the plan puts there (in a
    watched namespace, those the watcher found: it sees every labelled object arrive)."""
    selector = f"{MANAGED_BY}=berth,{LABEL_TENANT}={tenant.slug}"
    rows = []
    for live in client.list("v1", "Namespace", label_selector=selector):
        name = live["metadata"]["name"]
        if ("Namespace", "", name) not in wanted:
            rows.append(
                table_row(
                    "cluster",
                    cluster,
                    f"Namespace/{name}",
                    ORPHAN,
                    live="present",
                    namespace=name,
                    detail="labelled as the tenant's; no live namespace in Berth's records",
                )
            )
    # Only in the tenant's own namespaces: shared ones (Argo CD's) hold other tenants' too.
    own = {o["metadata"]["name"] for o in desired if o["kind"] == "Namespace"}
    kinds = sorted(
        {
            (o["apiVersion"], o["kind"], o["metadata"]["namespace"])
            for o in desired
            if o["metadata"].get("namespace") in own and o["kind"] in LISTED_KINDS
        }
    )
    rows += watched_orphans(cluster, {n: watched[n] for n in sorted(own & set(watched))})
    for api_version, kind, namespace in kinds:
        if namespace in watched:
            continue
        for live in client.list(api_version, kind, namespace=namespace, label_selector=selector):
            name = live["metadata"]["name"]
            if (kind, namespace, name) not in wanted:
                ref = ObjectRef(api_version, kind, name, namespace)
                rows.append(
                    table_row(
                        "cluster",
                        cluster,
                        str(ref),
                        ORPHAN,
                        namespace=namespace,
                        live="present",
                        detail="labelled as Berth's; no plan applies it",
                    )
                )
    return rows


def git_rows(
    head: str, branch: dict[str, str], expected: dict[str, tuple[str, str, str]]
) -> list[dict[str, Any]]:
    """One row per file a tenant_sync's commit would leave, compared with the branch; one
    per file headed as Berth's that none would."""
    at = f"at {head[:12]}"
    rows = []
    for path, (cluster, content, status) in sorted(expected.items()):
        have = branch.get(path)
        if have is None:
            state, detail, git = MISSING_IN_GIT, "Berth would write it; the branch lacks it", ""
        elif have == content:
            state, git = IN_SYNC, at
            detail = (
                ""
                if gitops_plan.is_managed(have) or gitops_plan.is_skeleton(have)
                else "the team's (no Berth header): left alone"
            )
        else:
            state, detail, git = DRIFTED, "differs from what Berth would write", at
        rows.append(
            table_row(
                "git",
                cluster,
                path,
                state,
                db=f"file {_digest(content)}",
                git=git,
                engine=status,
                detail=detail,
            )
        )
    for path, content in sorted(branch.items()):
        if path not in expected and gitops_plan.is_managed(content):
            rows.append(
                table_row(
                    "git",
                    "",
                    path,
                    ORPHAN,
                    git=at,
                    detail="Berth's header; no live application or cluster in "
                    "Berth's records wants it",
                )
            )
    return rows


def _live_engine_objects(files: dict[str, str], client: ClusterClient | None) -> dict[str, str]:
    """path -> the GitOps engine's status of the objects of that file it reconciles, when the
    cluster holds them."""
    if client is None:
        return {}
    found: dict[str, str] = {}
    for path, content in files.items():
        if not path.endswith((".yaml", ".yml")):
            continue
        statuses = []
        for obj in gitops_plan.cluster_objects({path: content}):
            group = obj["apiVersion"].split("/")[0]
            if (group, obj["kind"]) not in ENGINE_KINDS or not obj["metadata"].get("namespace"):
                continue
            try:
                live = client.get(ref_of(obj))
            except KubeError as error:
                # Berth's RBAC may not read it (the chart gives only `promote` on Kargo
                # Stages): say so rather than show nothing.
                statuses.append(
                    f"{obj['kind']} {obj['metadata']['name']}: Berth cannot read "
                    f"it ({error.message.splitlines()[0][:80]})"
                )
                continue
            said = (
                engine_status({**live, "kind": obj["kind"]}) if live else "not on the cluster yet"
            )
            statuses.append(f"{obj['kind']} {obj['metadata']['name']}: {said}")
        if statuses:
            found[path] = "; ".join(statuses)
    return found
