"""The tenant's own objects on a cluster, shared by all its projects: where its engines
read its repository, as whom, and the root that applies what the repository says for this
cluster (`<base>clusters/<cluster>`, provisioning.gitops_plan).

Argo CD: the namespace `<tenant>-apps` (Applications only: a quota there runs no pod), the
tenant's AppProject, the repository Secret scoped to that AppProject, and the root
Application syncing `clusters/<cluster>` into `<tenant>-apps`, bound to the AppProject.

Flux: the namespace `<tenant>-gitops` (no pod either), the reconciler ServiceAccount
everything of the tenant is applied as, the repository Secret, one GitRepository for the
tenant's repository and the root Kustomization, and the repository URLs the admission
policy lets a source there name (a ConfigMap, the policy's parameter).
"""

from __future__ import annotations

from typing import Any

from provisioning.plan.credentials import credential_values, secret
from provisioning.plan.model import (
    ARGOCD,
    ARGOCD_APPLICATIONS_ROLE,
    FLUX,
    FLUX_RECONCILER_ROLE,
    GITOPS_SERVICE_ACCOUNT,
    GITOPS_SOURCES_CONFIG,
    IN_CLUSTER_SERVER,
    RECONCILER_SERVICE_ACCOUNT,
    REPO_CREDENTIALS,
    ROOT_NAME,
    PlanInput,
    metadata_of,
    owned_labels,
)
from provisioning.plan.namespace import pod_security, role_binding
from provisioning.plan.projects import NOTHING_RUNS, appproject
from provisioning.plan.repository import cluster_dir, flux_url, public_url

ARGOCD_REPOSITORY_LABEL = "argocd.argoproj.io/secret-type"


def _no_pods_quota(inputs: PlanInput, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": metadata_of("berth-quota", owned_labels(inputs), namespace),
        "spec": {"hard": dict(NOTHING_RUNS)},
    }


def _namespace(inputs: PlanInput, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": metadata_of(name, {**owned_labels(inputs), **pod_security("restricted")}),
    }


def argocd_tenant_objects(inputs: PlanInput) -> list[dict[str, Any]]:
    tenant, cluster = inputs.tenant, inputs.cluster
    labels = owned_labels(inputs)
    apps = tenant.apps_namespace
    objects = [_namespace(inputs, apps), _no_pods_quota(inputs, apps), appproject(inputs)]
    if cluster.argocd_impersonation:
        # The root syncs as `berth-gitops` of its destination, <tenant>-apps: Applications
        # there and nothing else.
        objects += [
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": metadata_of(GITOPS_SERVICE_ACCOUNT, labels, apps),
            },
            role_binding(
                GITOPS_SERVICE_ACCOUNT,
                apps,
                ARGOCD_APPLICATIONS_ROLE,
                [{"kind": "ServiceAccount", "name": GITOPS_SERVICE_ACCOUNT, "namespace": apps}],
                labels,
            ),
        ]
    if tenant.credential is not None and tenant.repo_url and cluster.argocd_repository_secrets:
        values = {"type": "git", "url": public_url(tenant.repo_url), "project": tenant.slug}
        values |= credential_values(
            tenant.credential, https=("username", "password"), ssh="sshPrivateKey"
        )
        objects.append(
            secret(
                f"berth-repo-{tenant.slug}",
                cluster.argocd_namespace,
                {**labels, ARGOCD_REPOSITORY_LABEL: "repository"},
                values,
            )
        )
    if tenant.repo_url:
        objects.append(
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": metadata_of(ROOT_NAME, labels, apps),
                "spec": {
                    "project": tenant.slug,
                    "source": {
                        "repoURL": public_url(tenant.repo_url),
                        "targetRevision": tenant.repo_branch,
                        "path": cluster_dir(tenant, cluster.name, ARGOCD),
                    },
                    "destination": {"server": IN_CLUSTER_SERVER, "namespace": apps},
                    "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
                },
            }
        )
    return objects


def flux_tenant_objects(inputs: PlanInput) -> list[dict[str, Any]]:
    tenant = inputs.tenant
    labels = owned_labels(inputs)
    home = tenant.gitops_namespace
    objects = [
        _namespace(inputs, home),
        _no_pods_quota(inputs, home),
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata_of(RECONCILER_SERVICE_ACCOUNT, labels, home),
        },
        role_binding(
            RECONCILER_SERVICE_ACCOUNT,
            home,
            FLUX_RECONCILER_ROLE,
            [{"kind": "ServiceAccount", "name": RECONCILER_SERVICE_ACCOUNT, "namespace": home}],
            labels,
        ),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata_of(GITOPS_SOURCES_CONFIG, labels, home),
            # The admission policy's parameter: the only repository a source here may name.
            "data": {"repository": flux_url(tenant.repo_url)} if tenant.repo_url else {},
        },
    ]
    if not tenant.repo_url:
        return objects
    source: dict[str, Any] = {
        "interval": "1m0s",
        "url": flux_url(tenant.repo_url),
        "ref": {"branch": tenant.repo_branch},
    }
    if tenant.credential is not None:
        values = credential_values(
            tenant.credential, https=("username", "password"), ssh="identity"
        )
        if tenant.credential.transport == "ssh":
            values["known_hosts"] = tenant.credential.known_hosts
        objects.append(secret(REPO_CREDENTIALS, home, labels, values))
        source["secretRef"] = {"name": REPO_CREDENTIALS}
    objects += [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": metadata_of(tenant.slug, labels, home),
            "spec": source,
        },
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": metadata_of(ROOT_NAME, labels, home),
            "spec": {
                "interval": "10m0s",
                "retryInterval": "1m0s",
                "timeout": "5m0s",
                "path": f"./{cluster_dir(tenant, inputs.cluster.name, FLUX)}",
                "prune": True,
                "sourceRef": {"kind": "GitRepository", "name": tenant.slug},
                # As the tenant, and only into its GitOps namespace: the files there can
                # create Kustomizations (which the admission policy fences), nothing else.
                "serviceAccountName": RECONCILER_SERVICE_ACCOUNT,
                "targetNamespace": home,
            },
        },
    ]
    return objects


def tenant_objects(inputs: PlanInput) -> list[dict[str, Any]]:
    """The tenant's own objects for the engines `inputs.tenant_engines` names; its AppProject
    alone where the plan changes its namespaces without applying its roots (`refence`)."""
    objects: list[dict[str, Any]] = []
    if ARGOCD in inputs.tenant_engines and inputs.cluster.argocd_namespace:
        objects += argocd_tenant_objects(inputs)
    elif inputs.refence and inputs.cluster.argocd_namespace:
        objects.append(appproject(inputs))
    if FLUX in inputs.tenant_engines:
        objects += flux_tenant_objects(inputs)
    return objects
