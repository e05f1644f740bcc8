"""The tenant-owned definitions themselves: Argo CD Applications, Flux Kustomizations, Kargo
Warehouse and Stages, and the kustomize files (skeletons and Berth's own lists).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from provisioning.gitops_plan.layout import (
    LABEL_PART_OF,
    application_name,
    environment_dir,
    overlay_path,
    stage_name,
    writes_argocd,
)
from provisioning.plan import (
    IN_CLUSTER_SERVER,
    LABEL_ENVIRONMENT,
    LABEL_PROJECT,
    LABEL_TENANT,
    LABEL_TIER,
    RECONCILER_SERVICE_ACCOUNT,
    NamespaceSpec,
    PlanInput,
    public_url,
    uses_kargo,
)
from tenants.naming import kubernetes_id


def part_of_labels(inputs: PlanInput, ns: NamespaceSpec | None = None) -> dict[str, str]:
    # Not `app.kubernetes.io/managed-by: berth`: the team's controllers apply these objects,
    # and Berth's admission policy protects what carries that label from everyone but Berth.
    labels = {LABEL_TENANT: inputs.tenant.slug, LABEL_PART_OF: inputs.app}
    if ns is not None:
        labels[LABEL_TIER] = ns.tier.slug
        if ns.environment:
            labels[LABEL_ENVIRONMENT] = ns.environment
    if inputs.project:
        labels[LABEL_PROJECT] = inputs.project
    return labels


def application(inputs: PlanInput, ns: NamespaceSpec) -> dict[str, Any]:
    """One Argo CD Application per environment, in the tenant's apps namespace."""
    metadata: dict[str, Any] = {
        "name": application_name(inputs, ns),
        "namespace": inputs.tenant.apps_namespace,
        "labels": part_of_labels(inputs, ns),
        # Deleting the Application (its file removed on decommission) deletes what it made.
        "finalizers": ["resources-finalizer.argocd.argoproj.io"],
    }
    if uses_kargo(inputs):
        stage = f"{inputs.kargo_namespace}:{stage_name(ns)}"
        metadata["annotations"] = {"kargo.akuity.io/authorized-stage": stage}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": metadata,
        "spec": {
            "project": inputs.tenant.slug,
            "source": {
                "repoURL": public_url(inputs.tenant.repo_url),
                "targetRevision": inputs.tenant.repo_branch,
                "path": overlay_path(inputs, ns),
            },
            "destination": {"server": IN_CLUSTER_SERVER, "namespace": ns.name},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["CreateNamespace=false"],
            },
        },
    }


def flux_kustomization(inputs: PlanInput, ns: NamespaceSpec) -> dict[str, Any]:
    """The environment's Flux Kustomization, in the tenant's GitOps namespace beside the
    tenant's one source: applied by the root, it applies the environment's overlay into its
    namespace as the tenant's reconciler (which may do there what the team may)."""
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {
            "name": application_name(inputs, ns),
            "namespace": inputs.tenant.gitops_namespace,
            "labels": part_of_labels(inputs, ns),
        },
        "spec": {
            "interval": "10m0s",
            "retryInterval": "1m0s",
            "timeout": "5m0s",
            "path": f"./{overlay_path(inputs, ns)}",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": inputs.tenant.slug},
            "serviceAccountName": RECONCILER_SERVICE_ACCOUNT,
            "targetNamespace": ns.name,
        },
    }


def image_repository(inputs: PlanInput, template: str) -> str:
    return template.format(tenant=inputs.tenant.slug, app=inputs.app)


def warehouse(inputs: PlanInput, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "kargo.akuity.io/v1alpha1",
        "kind": "Warehouse",
        "metadata": {
            "name": inputs.app,
            "namespace": inputs.kargo_namespace,
            "labels": part_of_labels(inputs),
        },
        "spec": {
            "interval": "5m0s",
            "freightCreationPolicy": "Automatic",
            "subscriptions": [
                {
                    "image": {
                        "repoURL": image,
                        "imageSelectionStrategy": "SemVer",
                        "discoveryLimit": 20,
                    }
                }
            ],
        },
    }


def promotion_order(namespaces: Iterable[NamespaceSpec]) -> list[NamespaceSpec]:
    return sorted(namespaces, key=lambda ns: (ns.tier.is_ephemeral, ns.tier.position, ns.tier.slug))


def stages(inputs: PlanInput, image: str) -> list[dict[str, Any]]:
    """dev → staging → prod in tier order; ephemeral tiers take Freight straight from the
    Warehouse and feed nothing."""
    project = inputs.kargo_namespace
    documents = []
    upstream = ""
    for ns in promotion_order(inputs.namespaces):
        stage = stage_name(ns)
        if ns.tier.is_ephemeral or not upstream:
            sources: dict[str, Any] = {"direct": True}
        else:
            sources = {"stages": [upstream]}
        if not ns.tier.is_ephemeral:
            upstream = stage
        steps: list[dict[str, Any]] = [
            {
                "uses": "git-clone",
                "config": {
                    "repoURL": "${{ vars.gitRepo }}",
                    "checkout": [{"branch": "${{ vars.gitBranch }}", "path": "./out"}],
                },
            },
            {
                "uses": "kustomize-set-image",
                "as": "update-image",
                "config": {
                    "path": f"./out/{overlay_path(inputs, ns)}",
                    "images": [
                        {
                            "image": "${{ vars.imageRepo }}",
                            "tag": "${{ imageFrom(vars.imageRepo).Tag }}",
                        }
                    ],
                },
            },
            {
                "uses": "git-commit",
                "as": "commit",
                "config": {
                    "path": "./out",
                    "message": "${{ outputs['update-image'].commitMessage }}",
                },
            },
            {"uses": "git-push", "config": {"path": "./out"}},
        ]
        if writes_argocd(inputs):
            steps.append(
                {
                    "uses": "argocd-update",
                    "config": {
                        "apps": [
                            {
                                "name": application_name(inputs, ns),
                                "namespace": inputs.tenant.apps_namespace,
                                "sources": [
                                    {
                                        "repoURL": "${{ vars.gitRepo }}",
                                        "desiredRevision": "${{ outputs.commit.commit }}",
                                    }
                                ],
                            }
                        ]
                    },
                }
            )
        documents.append(
            {
                "apiVersion": "kargo.akuity.io/v1alpha1",
                "kind": "Stage",
                "metadata": {
                    "name": stage,
                    "namespace": project,
                    "labels": part_of_labels(inputs, ns),
                },
                "spec": {
                    "requestedFreight": [
                        {"origin": {"kind": "Warehouse", "name": inputs.app}, "sources": sources}
                    ],
                    "promotionTemplate": {
                        "spec": {
                            "vars": [
                                {"name": "gitRepo", "value": public_url(inputs.tenant.repo_url)},
                                {"name": "gitBranch", "value": inputs.tenant.repo_branch},
                                {"name": "imageRepo", "value": image},
                            ],
                            "steps": steps,
                        }
                    },
                },
            }
        )
    return documents


BACKSTAGE_KUBERNETES_ID = "backstage.io/kubernetes-id"


def kustomization(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", **fields}


def base_skeleton(inputs: PlanInput) -> tuple[str, dict[str, Any]]:
    comment = (
        f"The manifests of {inputs.app} that every environment shares: add them here and\n"
        "list them under resources. Each environment's overlay (../overlays/<tier>) builds\n"
        "on this base. The label is how Backstage's Kubernetes plugin finds its workloads\n"
        "(on objects and pod templates; selectors are left alone)."
    )
    backstage = {
        "pairs": {BACKSTAGE_KUBERNETES_ID: kubernetes_id(inputs.tenant.slug, inputs.app)},
        "includeSelectors": False,
        "includeTemplates": True,
    }
    return comment, kustomization(labels=[backstage], resources=[])


def overlay_skeleton(inputs: PlanInput, ns: NamespaceSpec) -> tuple[str, dict[str, Any]]:
    comment = (
        f"What differs in {environment_dir(ns)} (namespace {ns.name}): patches, replicas, "
        "image tags.\nThis directory is what gets deployed into that namespace."
    )
    up = "../" * (environment_dir(ns).count("/") + 2)
    return comment, kustomization(namespace=ns.name, resources=[f"{up}base"])
