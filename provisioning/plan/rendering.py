"""A request's whole plan, in apply order; deletes in the order that leaves nothing behind
(a project's namespaces, then its Kargo side, then the tenant's own objects)."""

from __future__ import annotations

from typing import Any

from provisioning.plan.access import grant_objects
from provisioning.plan.model import (
    ARGOCD,
    FLUX,
    KIND_ORDER,
    ROOT_NAME,
    ObjectRef,
    Plan,
    PlanInput,
)
from provisioning.plan.namespace import namespace_objects
from provisioning.plan.projects import kargo_objects
from provisioning.plan.tenant import tenant_objects

KARGO_VERSION = "kargo.akuity.io/v1alpha1"


def _sort_key(obj: dict[str, Any]) -> tuple[int, str, str]:
    meta = obj["metadata"]
    return (KIND_ORDER.get(obj["kind"], 99), meta.get("namespace", ""), meta["name"])


def uses_kargo(inputs: PlanInput) -> bool:
    """The project's Kargo side exists on this cluster (a project on Argo CD + Kargo)."""
    return inputs.engine == "argocd_kargo" and bool(inputs.project) and inputs.cluster.has_kargo


def deletions(inputs: PlanInput) -> tuple[ObjectRef, ...]:
    refs = [ObjectRef("v1", "Namespace", name) for name in inputs.remove_namespaces]
    for project in inputs.remove_kargo:
        refs += [
            ObjectRef(KARGO_VERSION, "Project", project.namespace),
            ObjectRef("v1", "Namespace", project.namespace),
        ]
    tenant, cluster = inputs.tenant, inputs.cluster
    if ARGOCD in inputs.remove_tenant_engines and cluster.argocd_namespace:
        # The root first: deleting it leaves its Applications (already pruned, their files
        # gone), then what Berth holds in Argo CD's namespace, then the tenant's namespace.
        refs += [
            ObjectRef("argoproj.io/v1alpha1", "Application", ROOT_NAME, tenant.apps_namespace),
            ObjectRef("v1", "Secret", f"berth-repo-{tenant.slug}", cluster.argocd_namespace),
            ObjectRef("argoproj.io/v1alpha1", "AppProject", tenant.slug, cluster.argocd_namespace),
            ObjectRef("v1", "Namespace", tenant.apps_namespace),
        ]
    if FLUX in inputs.remove_tenant_engines:
        refs += [
            ObjectRef(
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                ROOT_NAME,
                tenant.gitops_namespace,
            ),
            ObjectRef("v1", "Namespace", tenant.gitops_namespace),
        ]
    return tuple(refs)


def render(inputs: PlanInput) -> Plan:
    objects: list[dict[str, Any]] = []
    for ns in inputs.namespaces:
        objects += namespace_objects(inputs, ns)
    objects += grant_objects(inputs.grants, inputs.tenant.slug)
    objects += tenant_objects(inputs)
    if inputs.cluster.has_kargo:
        for project in inputs.kargo_projects:
            objects += kargo_objects(inputs, project)
    return Plan(apply=tuple(sorted(objects, key=_sort_key)), delete=deletions(inputs))
