"""The plan: the exact cluster objects a request causes, rendered as plain data.

Pure: inputs are frozen dataclasses (built from the database by `provisioning.inputs`),
output is a `Plan` of dicts in apply order plus references to delete. No I/O, no string
templates. Every object carries Berth's ownership labels so the engine can find, diff and
garbage-collect what it made. The plan's digest binds an approval to exactly this content.

    model      labels, inputs, ObjectRef, Plan
    namespace  one namespace's bundle
    projects   the AppProject and the Kargo Project of a project
    rendering  a request's whole plan, in apply order
"""

from provisioning.plan.model import (
    ARGOCD_ACTIONS,
    GITOPS_SERVICE_ACCOUNT,
    GUARDRAIL_KINDS,
    IN_CLUSTER_SERVER,
    KIND_ORDER,
    LABEL_PROJECT,
    LABEL_REQUEST,
    LABEL_TENANT,
    LABEL_TIER,
    MANAGED_BY,
    ROLES,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
    ClaimSpec,
    ClusterSpec,
    NamespaceSpec,
    ObjectRef,
    Plan,
    PlanInput,
    TenantSpec,
    TierSpec,
    metadata_of,
    owned_labels,
    ref_of,
    uses_argocd,
)
from provisioning.plan.namespace import namespace_objects
from provisioning.plan.projects import argocd_objects, kargo_objects
from provisioning.plan.rendering import render

__all__ = [
    "ARGOCD_ACTIONS",
    "ClaimSpec",
    "ClusterSpec",
    "GITOPS_SERVICE_ACCOUNT",
    "GUARDRAIL_KINDS",
    "IN_CLUSTER_SERVER",
    "KIND_ORDER",
    "LABEL_PROJECT",
    "LABEL_REQUEST",
    "LABEL_TENANT",
    "LABEL_TIER",
    "MANAGED_BY",
    "NamespaceSpec",
    "ObjectRef",
    "Plan",
    "PlanInput",
    "ROLES",
    "TENANT_EDIT_ROLE",
    "TENANT_VIEW_ROLE",
    "TenantSpec",
    "TierSpec",
    "argocd_objects",
    "kargo_objects",
    "metadata_of",
    "namespace_objects",
    "owned_labels",
    "ref_of",
    "render",
    "uses_argocd",
]
