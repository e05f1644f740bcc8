"""A request's whole plan, in apply order."""

from __future__ import annotations

from typing import Any

from provisioning.plan.model import KIND_ORDER, ObjectRef, Plan, PlanInput, uses_argocd
from provisioning.plan.namespace import namespace_objects
from provisioning.plan.projects import argocd_objects, kargo_objects


def _sort_key(obj: dict[str, Any]) -> tuple:
    meta = obj["metadata"]
    return (KIND_ORDER.get(obj["kind"], 99), meta.get("namespace", ""), meta["name"])


def render(inputs: PlanInput) -> Plan:
    objects: list[dict[str, Any]] = []
    for ns in inputs.namespaces:
        objects += namespace_objects(inputs, ns)
    if uses_argocd(inputs.engine) and inputs.cluster.argocd_namespace:
        objects += argocd_objects(inputs)
    if inputs.engine == "argocd_kargo" and inputs.project and inputs.cluster.has_kargo:
        objects += kargo_objects(inputs)
    deletions = tuple(ObjectRef("v1", "Namespace", name) for name in inputs.remove_namespaces)
    return Plan(apply=tuple(sorted(objects, key=_sort_key)), delete=deletions)
