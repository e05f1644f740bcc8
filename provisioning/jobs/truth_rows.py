"""A truth table's rows: the five states, the shape of a row, and the rows a healthy
drift watcher answers from what it recorded, with no call to the cluster."""

from __future__ import annotations

from typing import Any

from provisioning.jobs.watch_streams import WATCHED_KINDS
from tenants.choices import NamespaceState
from tenants.models import Namespace, Tenant

IN_SYNC, DRIFTED, MISSING_IN_GIT, MISSING_IN_CLUSTER, ORPHAN = (
    "in_sync",
    "drifted",
    "missing_in_git",
    "missing_in_cluster",
    "orphan",
)
STATES = (IN_SYNC, DRIFTED, MISSING_IN_GIT, MISSING_IN_CLUSTER, ORPHAN)
# What a healthy watcher answers for: the kinds it watches, in the namespaces it plans.
WATCHED = frozenset(kind for _, kind in WATCHED_KINDS)


def table_row(source: str, cluster: str, what: str, state: str, **fields: Any) -> dict[str, Any]:
    made = {
        "source": source,
        "cluster": cluster,
        "object": what,
        "state": state,
        "namespace": "",
        "detail": "",
        "db": "",
        "git": "",
        "live": "",
        "engine": "",
    }
    made.update(fields)
    return made


def watcher_findings(tenant: Tenant, cluster_id: int) -> dict[str, list[dict[str, Any]]]:
    """What the cluster's watcher has recorded of each of the tenant's namespaces there (its
    drift findings, [] when everything matched): one query, however many namespaces."""
    return dict(
        Namespace.objects.filter(
            tenant=tenant, cluster_id=cluster_id, state=NamespaceState.ACTIVE
        ).values_list("name", "drift")
    )


def watched_row(
    cluster: str, what: str, findings: list[dict[str, Any]], common: dict[str, str]
) -> dict[str, Any]:
    """An object's row as the watcher last saw it. A finding it repaired is in sync again."""
    finding = next((f for f in findings if f.get("object") == what and not f.get("repaired")), None)
    if finding is None:
        return table_row("cluster", cluster, what, IN_SYNC, live="as planned (watched)", **common)
    if finding["status"] == "missing":
        return table_row("cluster", cluster, what, MISSING_IN_CLUSTER, live="absent", **common)
    return table_row(
        "cluster",
        cluster,
        what,
        DRIFTED,
        live="present (watched)",
        detail=finding.get("detail", ""),
        **common,
    )


def watched_orphans(cluster: str, watched: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Objects the watcher found labelled as Berth's in those namespaces, with no plan."""
    return [
        table_row(
            "cluster",
            cluster,
            finding["object"],
            ORPHAN,
            namespace=namespace,
            live="present (watched)",
            detail="labelled as Berth's; no plan applies it",
        )
        for namespace, findings in watched.items()
        for finding in findings
        if finding.get("status") == "unexpected"
    ]
