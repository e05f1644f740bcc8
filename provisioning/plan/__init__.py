"""The plan: the exact cluster objects a request causes, rendered as plain data.

Pure: inputs are frozen dataclasses (built from the database by `provisioning.inputs`),
output is a `Plan` of dicts in apply order plus references to delete. No I/O, no string
templates. Every object carries Berth's ownership labels so the engine can find, diff and
garbage-collect what it made. The plan's digest binds an approval to exactly this content.

    model        labels, names, inputs, ObjectRef, Plan (and how it is shown redacted)
    namespace    one namespace's bundle
    tenant       the tenant's own objects on a cluster: roots, credentials, AppProject
    projects     the AppProject, and a project's Kargo side
    credentials  repository credentials as Secrets
    repository   the tenant's repository: URLs as engines want them, Berth's directories
    rendering    a request's whole plan, in apply order
"""

from provisioning.plan.model import (
    ANNOTATION_ACCESS_EXPIRES,
    ARGOCD,
    ARGOCD_ACTIONS,
    ARGOCD_APPLICATIONS_ROLE,
    DOMAINS_CONFIG,
    FLUX,
    FLUX_RECONCILER_ROLE,
    GITOPS_SERVICE_ACCOUNT,
    GITOPS_SOURCES_CONFIG,
    GUARDRAIL_KINDS,
    IN_CLUSTER_SERVER,
    KARGO_VIEWER_ROLE,
    KIND_ORDER,
    LABEL_ACCESS_GRANT,
    LABEL_ENVIRONMENT,
    LABEL_PROJECT,
    LABEL_REQUEST,
    LABEL_TENANT,
    LABEL_TIER,
    MANAGED_BY,
    RECONCILER_SERVICE_ACCOUNT,
    REPO_CREDENTIALS,
    ROLES,
    ROOT_NAME,
    TENANT_EDIT_ROLE,
    TENANT_VIEW_ROLE,
    ClaimSpec,
    ClusterSpec,
    GrantSpec,
    KargoProject,
    NamespaceSpec,
    ObjectRef,
    Plan,
    PlanInput,
    RepoCredential,
    SleepSpec,
    TenantSpec,
    TierSpec,
    engine_family,
    metadata_of,
    owned_labels,
    ref_of,
    uses_argocd,
)
from provisioning.plan.namespace import namespace_objects
from provisioning.plan.projects import appproject, kargo_objects, promotable_stages
from provisioning.plan.rendering import render, uses_kargo
from provisioning.plan.repository import cluster_dir, flux_url, public_url, repo_root
from provisioning.plan.shown import REDACTED, redact_secret
from provisioning.plan.tenant import tenant_objects

__all__ = [
    "ARGOCD",
    "ARGOCD_ACTIONS",
    "ARGOCD_APPLICATIONS_ROLE",
    "DOMAINS_CONFIG",
    "FLUX",
    "FLUX_RECONCILER_ROLE",
    "GITOPS_SERVICE_ACCOUNT",
    "GITOPS_SOURCES_CONFIG",
    "GUARDRAIL_KINDS",
    "IN_CLUSTER_SERVER",
    "KARGO_VIEWER_ROLE",
    "KIND_ORDER",
    "LABEL_ENVIRONMENT",
    "LABEL_PROJECT",
    "LABEL_REQUEST",
    "LABEL_TENANT",
    "LABEL_TIER",
    "MANAGED_BY",
    "RECONCILER_SERVICE_ACCOUNT",
    "REDACTED",
    "REPO_CREDENTIALS",
    "ROLES",
    "ROOT_NAME",
    "TENANT_EDIT_ROLE",
    "TENANT_VIEW_ROLE",
    "appproject",
    "ClaimSpec",
    "cluster_dir",
    "ClusterSpec",
    "KargoProject",
    "flux_url",
    "kargo_objects",
    "metadata_of",
    "namespace_objects",
    "NamespaceSpec",
    "GrantSpec",
    "LABEL_ACCESS_GRANT",
    "ANNOTATION_ACCESS_EXPIRES",
    "ObjectRef",
    "owned_labels",
    "Plan",
    "PlanInput",
    "promotable_stages",
    "public_url",
    "redact_secret",
    "ref_of",
    "render",
    "repo_root",
    "RepoCredential",
    "SleepSpec",
    "tenant_objects",
    "TenantSpec",
    "TierSpec",
    "uses_argocd",
    "engine_family",
    "uses_kargo",
]
