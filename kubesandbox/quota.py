"""A ResourceQuota's ``status`` as kube-controller-manager's quota controller keeps it:
``hard`` copied from ``spec.hard``, ``used`` counted from what the namespace holds.

The stand-in runs no controllers, so the status is worked out when a quota is served (GET,
LIST, watch events), never written: no extra writes, versions or events. What is counted, as
upstream's evaluators count it:

* pods that have not finished (phase neither Succeeded nor Failed) and match the quota's
  scopes (``Terminating``, ``NotTerminating``, ``BestEffort``, ``NotBestEffort``,
  ``PriorityClass`` in ``scopeSelector``): ``pods``, ``count/pods``; ``requests.*`` (and the
  bare ``cpu``, ``memory``, ``ephemeral-storage``) and ``limits.*`` summed over the pods'
  containers, an init container counting as its largest need (sidecars added), plus
  ``spec.overhead``; ``hugepages-*`` and extended resources as ``requests.<name>``;
* services (``services``, ``services.loadbalancers``, ``services.nodeports``);
* persistent volume claims (``persistentvolumeclaims``, ``requests.storage``, and both per
  ``<class>.storageclass.storage.k8s.io/``);
* ``configmaps``, ``secrets``, ``resourcequotas``, ``replicationcontrollers`` and
  ``count/<resource>[.<group>]`` of any served namespaced type: the objects stored.

A name nothing counts keeps what ``status.used`` said (upstream leaves it alone too).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from fractions import Fraction

from .quantity import DECIMAL, Quantity, parse
from .storeview import ControlledStore

COMPUTE = ("cpu", "memory", "ephemeral-storage")
# Counted under their plain names too (services and claims have evaluators of their own).
_LEGACY_COUNTS = ("configmaps", "secrets", "resourcequotas", "replicationcontrollers")
_STORAGE_CLASS = ".storageclass.storage.k8s.io/"
Usage = dict[str, Quantity]


def _count(n: int) -> Quantity:
    return Quantity(Fraction(n), DECIMAL)


def _add(into: Usage, more: Usage) -> None:
    for name, amount in more.items():
        into[name] = into[name] + amount if name in into else amount


def _max(into: Usage, other: Usage) -> None:
    for name, amount in other.items():
        if name not in into or amount.value > into[name].value:
            into[name] = amount


# -- pods ----------------------------------------------------------------------------------


def _own(container: dict, field: str) -> Usage:
    amounts = (container.get("resources") or {}).get(field) or {}
    return {name: parse(value) for name, value in amounts.items()}


def pod_totals(spec: dict, field: str) -> Usage:
    """A pod's ``requests`` or ``limits``: its containers, each init container at its own
    need (restartable ones, sidecars, running alongside), plus the pod's overhead."""
    totals: Usage = {}
    for container in spec.get("containers") or []:
        _add(totals, _own(container, field))
    sidecars: Usage = {}
    init_need: Usage = {}
    for container in spec.get("initContainers") or []:
        own = _own(container, field)
        if container.get("restartPolicy") == "Always":
            _add(totals, own)
            _add(sidecars, own)
            need = dict(sidecars)
        else:
            need = dict(own)
            _add(need, sidecars)
        _max(init_need, need)
    _max(totals, init_need)
    overhead = {name: parse(value) for name, value in (spec.get("overhead") or {}).items()}
    _add(totals, {n: q for n, q in overhead.items() if field == "requests" or n in totals})
    return totals


def _extended(name: str) -> bool:
    return "/" in name and not name.startswith(("kubernetes.io/", "requests."))


def pod_usage(pod: dict) -> Usage:
    spec = pod.get("spec") or {}
    usage: Usage = {"pods": _count(1), "count/pods": _count(1)}
    for name, amount in pod_totals(spec, "requests").items():
        if name in COMPUTE or name.startswith("hugepages-"):
            usage[name] = usage[f"requests.{name}"] = amount
        elif _extended(name):
            usage[f"requests.{name}"] = amount
    for name, amount in pod_totals(spec, "limits").items():
        if name in COMPUTE:
            usage[f"limits.{name}"] = amount
    return usage


def _is_pod_resource(name: str) -> bool:
    bare = name.removeprefix("requests.").removeprefix("limits.")
    return (
        name in ("pods", "count/pods")
        or bare in COMPUTE
        or bare.startswith("hugepages-")
        or (name.startswith("requests.") and _extended(bare))
    )


def _best_effort(spec: dict) -> bool:
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return not any(
        name in ("cpu", "memory")
        for c in containers
        for field in ("requests", "limits")
        for name in _own(c, field)
    )


def _scope_matches(pod: dict, requirement: dict) -> bool:
    spec = pod.get("spec") or {}
    scope, operator = requirement.get("scopeName"), requirement.get("operator", "Exists")
    if scope == "PriorityClass":
        value = spec.get("priorityClassName") or ""
        if operator == "Exists":
            return bool(value)
        if operator in ("In", "NotIn"):
            return (value in (requirement.get("values") or [])) == (operator == "In")
        return False
    deadline = spec.get("activeDeadlineSeconds")
    facts = {
        "Terminating": isinstance(deadline, int) and deadline >= 0,
        "NotTerminating": not (isinstance(deadline, int) and deadline >= 0),
        "BestEffort": _best_effort(spec),
        "NotBestEffort": not _best_effort(spec),
    }
    matched = facts.get(scope or "", False)  # CrossNamespacePodAffinity: not looked at
    return matched if operator != "DoesNotExist" else not matched


def _counted(pod: dict, requirements: list[dict]) -> bool:
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return all(_scope_matches(pod, r) for r in requirements)


# -- services and claims -------------------------------------------------------------------


def service_usage(service: dict) -> Usage:
    spec = service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    node_ports = kind == "NodePort" or (
        kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False
    )
    return {
        "services": _count(1),
        "count/services": _count(1),
        "services.loadbalancers": _count(kind == "LoadBalancer"),
        "services.nodeports": _count(len(spec.get("ports") or []) if node_ports else 0),
    }


def _is_claims(name: str) -> bool:
    return "persistentvolumeclaims" in name or "requests.storage" in name


def claim_usage(claim: dict) -> Usage:
    spec = claim.get("spec") or {}
    storage = parse(((spec.get("resources") or {}).get("requests") or {}).get("storage", "0"))
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    klass = spec.get("storageClassName") or annotations.get(
        "volume.beta.kubernetes.io/storage-class", ""
    )
    usage = {
        "persistentvolumeclaims": _count(1),
        "count/persistentvolumeclaims": _count(1),
        "requests.storage": storage,
    }
    if klass:
        usage[f"{klass}{_STORAGE_CLASS}persistentvolumeclaims"] = _count(1)
        usage[f"{klass}{_STORAGE_CLASS}requests.storage"] = storage
    return usage


# -- the status ----------------------------------------------------------------------------


def _summed(objects: list[dict], usage_of: Callable[[dict], Usage]) -> Usage:
    total: Usage = {}
    for obj in objects:
        _add(total, usage_of(obj))
    return total


def used(store: ControlledStore, namespace: str, quota: dict) -> dict[str, str]:
    """``status.used`` for ``quota``: each name of ``spec.hard``, as counted now."""
    spec = quota.get("spec") or {}
    hard = spec.get("hard") or {}
    requirements = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    requirements += (spec.get("scopeSelector") or {}).get("matchExpressions") or []
    before = (quota.get("status") or {}).get("used") or {}
    usage: Usage = {}
    if any(_is_pod_resource(name) for name in hard):
        pods = [p for p in store.stored("", "pods", namespace) if _counted(p, requirements)]
        usage = _summed(pods, pod_usage)
    if any(name.startswith(("services", "count/services")) for name in hard):
        _add(usage, _summed(store.stored("", "services", namespace), service_usage))
    if any(_is_claims(name) for name in hard):
        _add(usage, _summed(store.stored("", "persistentvolumeclaims", namespace), claim_usage))
    out: dict[str, str] = {}
    for name in hard:
        if name in usage:
            out[name] = str(usage[name])
        elif _is_pod_resource(name) or name.startswith("services") or _is_claims(name):
            out[name] = "0"  # counted, and there is nothing
        elif name in _LEGACY_COUNTS or name.startswith("count/"):
            plural, _, group = name.removeprefix("count/").partition(".")
            served_here = any(
                rt.namespaced and (rt.group, rt.plural) == (group, plural)
                for rt in store.registry.all()
            )
            if served_here or name in _LEGACY_COUNTS:
                out[name] = str(_count(len(store.stored(group, plural, namespace))))
        elif name in before:
            out[name] = before[name]
    return out


def served(store: ControlledStore, answer: dict) -> dict:
    """A ResourceQuota, or a list of them, with the status the quota controller would keep."""
    items = answer.get("items") if "items" in answer else [answer]
    with store.lock:
        for quota in items or []:
            meta = quota.get("metadata") or {}
            hard = copy.deepcopy((quota.get("spec") or {}).get("hard") or {})
            status = quota.setdefault("status", {})
            status["hard"] = hard
            status["used"] = used(store, meta.get("namespace", ""), quota)
    return answer
