"""Server-side printing: the ``meta.k8s.io`` Table kube-apiserver answers to
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` (what ``kubectl get`` asks for).

The columns of the built-in kinds are those of upstream's printers
(``pkg/printers/internalversion``) for the kinds a tenant looks at: namespaces, resource
quotas, pods, deployments, config maps, secrets and role bindings. Custom resources get
their CRD's ``additionalPrinterColumns`` (JSONPath-evaluated; ``Age`` when there are none),
as the apiextensions server prints them. Other built-in kinds get ``Name`` and ``Age``.

Each row carries its object as ``includeObject`` asks: ``Metadata`` (the default, a
PartialObjectMetadata), ``Object`` (the whole object) or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import jsonpath

from .resources import ResourceType

META = "meta.k8s.io"
_NAME = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "priority": 0,
    "description": "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the generation "
    "of an appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
}
_AGE_TEXT = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)


def table_version(accept: str) -> str | None:
    """The Table version an Accept header asks for first (``v1`` or ``v1beta1``), or None
    when it asks for plain JSON first (or for no Table at all)."""
    for media_range in accept.split(","):
        kind, *parameters = (part.strip() for part in media_range.split(";"))
        params = dict(p.partition("=")[::2] for p in parameters)
        if kind not in ("application/json", "*/*", "application/*"):
            continue
        if params.get("as") != "Table":
            return None  # plain JSON is preferred to any Table that follows
        if params.get("g") == META and params.get("v") in ("v1", "v1beta1"):
            return params["v"]
    return None


def _column(
    name: str, description: str, type_: str = "string", priority: int = 0, format_: str = ""
) -> dict:
    return {
        "name": name,
        "type": type_,
        "format": format_,
        "description": description,
        "priority": priority,
    }


def _age(obj: dict, now: datetime) -> str:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not isinstance(stamp, str):
        return "<unknown>"
    try:
        created = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration((now - created).total_seconds())


def human_duration(seconds: float) -> str:
    """A duration as kubectl's AGE shows it (upstream's duration.HumanDuration)."""
    if seconds < -1:
        return "<invalid>"
    s = max(int(seconds), 0)
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    years = days // 365
    if years < 2:
        return f"{days}d"
    if years < 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"


# -- the built-in printers: (columns after Name, cells after the name) -------------------

Printer = tuple[list[dict], Callable[[dict, datetime], list[Any]]]
_AGE = _column("Age", _AGE_TEXT)


def _namespace(obj: dict, now: datetime) -> list[Any]:
    return [(obj.get("status") or {}).get("phase") or "Active", _age(obj, now)]


def _quota(obj: dict, now: datetime) -> list[Any]:
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    # Served quotas carry the status `quota` counts; spec.hard stands in for one without.
    hard = status.get("hard") or spec.get("hard") or {}
    used = status.get("used") or {}
    requests, limits = [], []
    for resource in sorted(hard):
        column = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        column.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [_age(obj, now), ", ".join(requests), ", ".join(limits)]


def _pod(obj: dict, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    reason = status.get("reason") or status.get("phase") or "Pending"
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        restarts,
        _age(obj, now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


def _deployment(obj: dict, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    return [
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        _age(obj, now),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>",
    ]


def _config_map(obj: dict, now: datetime) -> list[Any]:
    return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {}), _age(obj, now)]


def _secret(obj: dict, now: datetime) -> list[Any]:
    return [obj.get("type") or "Opaque", len(obj.get("data") or {}), _age(obj, now)]


def _role_binding(obj: dict, now: datetime) -> list[Any]:
    ref = obj.get("roleRef") or {}
    subjects = obj.get("subjects") or []

    def named(kind: str) -> str:
        return ", ".join(
            (
                f"{s.get('namespace', '')}/{s.get('name', '')}"
                if kind == "ServiceAccount"
                else s.get("name", "")
            )
            for s in subjects
            if s.get("kind") == kind
        )

    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _age(obj, now),
        named("User"),
        named("Group"),
        named("ServiceAccount"),
    ]


_BUILT_IN: dict[tuple[str, str], Printer] = {
    ("", "namespaces"): ([_column("Status", "The status of the namespace"), _AGE], _namespace),
    ("", "resourcequotas"): (
        [
            _AGE,
            _column(
                "Request",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            _column(
                "Limit",
                "Limits control the maximum amount of cpu/memory that a container "
                "may use independent of contention on the node.",
            ),
        ],
        _quota,
    ),
    ("", "pods"): (
        [
            _column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
            _column("Status", "The aggregate status of the containers in this pod."),
            _column(
                "Restarts",
                "The number of times the containers in this pod have been "
                "restarted and when the last container in this pod has restarted.",
                "string",
            ),
            _AGE,
            _column(
                "IP",
                "IP address allocated to the pod. Routable at least within the "
                "cluster. Empty if not yet allocated.",
                priority=1,
            ),
            _column(
                "Node",
                "NodeName is a request to schedule this pod onto a specific node.",
                priority=1,
            ),
            _column(
                "Nominated Node",
                "nominatedNodeName is set when this pod preempts other "
                "pods on the node, but it cannot be scheduled right away as preemption "
                "victims receive their graceful termination periods.",
                priority=1,
            ),
            _column(
                "Readiness Gates",
                "If specified, all readiness gates will be evaluated for pod readiness.",
                priority=1,
            ),
        ],
        _pod,
    ),
    ("apps", "deployments"): (
        [
            _column("Ready", "Number of the pod with ready state"),
            _column(
                "Up-to-date",
                "Total number of non-terminated pods targeted by this "
                "deployment that have the desired template spec.",
                "integer",
            ),
            _column(
                "Available",
                "Total number of available pods (ready for at least "
                "minReadySeconds) targeted by this deployment.",
                "integer",
            ),
            _AGE,
            _column("Containers", "Names of each container in the template.", priority=1),
            _column("Images", "Images referenced by each container in the template.", priority=1),
            _column(
                "Selector",
                "Label selector for pods. Existing ReplicaSets whose pods are "
                "selected by this will be the ones affected by this deployment.",
                priority=1,
            ),
        ],
        _deployment,
    ),
    ("", "configmaps"): (
        [_column("Data", "Data contains the configuration data.", "integer"), _AGE],
        _config_map,
    ),
    ("", "secrets"): (
        [
            _column("Type", "Used to facilitate programmatic handling of secret data."),
            _column("Data", "Data contains the secret data.", "integer"),
            _AGE,
        ],
        _secret,
    ),
    ("rbac.authorization.k8s.io", "rolebindings"): (
        [
            _column(
                "Role",
                "RoleRef can reference a Role in the current namespace or a "
                "ClusterRole in the global namespace.",
            ),
            _AGE,
            _column("Users", "Users in the roleBinding", priority=1),
            _column("Groups", "Groups in the roleBinding", priority=1),
            _column("ServiceAccounts", "ServiceAccounts in the roleBinding", priority=1),
        ],
        _role_binding,
    ),
}


# -- custom resources ------------------------------------------------------------------


def _custom_printer(rt: ResourceType) -> Printer:
    columns = rt.printer_columns or [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    ]
    definitions = [
        _column(
            c.get("name", ""),
            c.get("description", ""),
            c.get("type", "string"),
            int(c.get("priority") or 0),
            c.get("format", ""),
        )
        for c in columns
    ]
    paths = [jsonpath.compile("$" + c.get("jsonPath", "")) for c in columns]

    def cells(obj: dict, now: datetime) -> list[Any]:
        row = []
        for column, path in zip(columns, paths, strict=True):
            found = path.findall(obj)
            value = found[0] if found else None
            if column.get("type") == "date" and isinstance(value, str):
                value = _age({"metadata": {"creationTimestamp": value}}, now)
            row.append(value)
        return row

    return definitions, cells


def printer(rt: ResourceType) -> Printer:
    if rt.custom:
        cached = rt.cache.get("printer")
        if cached is None:
            cached = rt.cache["printer"] = _custom_printer(rt)
        return cached
    return _BUILT_IN.get((rt.group, rt.plural), ([_AGE], lambda obj, now: [_age(obj, now)]))


def _row_object(obj: dict, include: str, version: str) -> dict | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"{META}/{version}",
        "metadata": obj.get("metadata") or {},
    }


def table(
    rt: ResourceType,
    answer: dict,
    *,
    version: str,
    include: str = "Metadata",
    now: datetime | None = None,
) -> dict:
    """``answer`` (one object, or a list as the store answered it) as a Table."""
    now = now or datetime.now(UTC)
    columns, cells = printer(rt)
    items = answer.get("items") if "items" in answer else [answer]
    rows = []
    for obj in items or []:
        row: dict[str, Any] = {
            "cells": [(obj.get("metadata") or {}).get("name", ""), *cells(obj, now)]
        }
        row_object = _row_object(obj, include, version)
        if row_object is not None:
            row["object"] = row_object
        rows.append(row)
    metadata = {
        k: v
        for k, v in (answer.get("metadata") or {}).items()
        if k in ("resourceVersion", "continue", "remainingItemCount")
    }
    return {
        "kind": "Table",
        "apiVersion": f"{META}/{version}",
        "metadata": metadata,
        "columnDefinitions": [_NAME, *columns],
        "rows": rows,
    }
