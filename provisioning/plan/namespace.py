"""One namespace's bundle: the Namespace with Pod Security labels, its GitOps
ServiceAccount, ResourceQuota, LimitRange, default-deny NetworkPolicies, the tenant's
allowed domains (what Berth's admission policies read) and the RoleBindings of the
tenant's groups (and, on Flux, of the tenant's reconciler).
"""

from __future__ import annotations

from typing import Any

from provisioning.plan.access import grant_objects
from provisioning.plan.model import (
    DOMAINS_CONFIG,
    FLUX,
    GITOPS_SERVICE_ACCOUNT,
    LABEL_PROJECT,
    LABEL_TIER,
    RECONCILER_SERVICE_ACCOUNT,
    ROLES,
    TENANT_EDIT_ROLE,
    ClusterSpec,
    NamespaceSpec,
    PlanInput,
    metadata_of,
    owned_labels,
)
from provisioning.plan.sleep import sleep_objects


def pod_security(level: str) -> dict[str, str]:
    return {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/audit": level,
        "pod-security.kubernetes.io/warn": level,
    }


def _cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _memory(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib and mib % 1024 == 0 else f"{mib}Mi"


def _network_policies(
    ns: NamespaceSpec, cluster: ClusterSpec, labels: dict[str, str]
) -> list[dict[str, Any]]:
    def policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": metadata_of(name, labels, ns.name),
            "spec": {"podSelector": {}, **spec},
        }

    same_namespace = [{"podSelector": {}}]
    policies = [
        policy("berth-default-deny", {"policyTypes": ["Ingress", "Egress"]}),
        policy(
            "berth-allow-same-namespace",
            {
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": same_namespace}],
                "egress": [{"to": same_namespace}],
            },
        ),
        policy(
            "berth-allow-dns",
            {
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                },
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    }
                ],
            },
        ),
    ]
    if ns.tier.network_preset == "ingress":
        policies.append(
            policy(
                "berth-allow-ingress-controller",
                {
                    "policyTypes": ["Ingress"],
                    "ingress": [
                        {
                            "from": [
                                {
                                    "namespaceSelector": {
                                        "matchLabels": {
                                            "kubernetes.io/metadata.name": cluster.ingress_namespace
                                        }
                                    }
                                }
                            ]
                        }
                    ],
                },
            )
        )
    return policies


def role_binding(
    name: str,
    namespace: str,
    role: str,
    subjects: list[dict[str, Any]],
    labels: dict[str, str],
    *,
    role_kind: str = "ClusterRole",
) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata_of(name, labels, namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }


def namespace_objects(inputs: PlanInput, ns: NamespaceSpec) -> list[dict[str, Any]]:
    """Everything that fences one namespace in: PSS labels, quota, limits, policies, RBAC."""
    labels = owned_labels(inputs, **{LABEL_TIER: ns.tier.slug, LABEL_PROJECT: ns.project})
    namespace_labels = {**labels, **pod_security(ns.tier.pod_security_level)}
    tier = ns.tier
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": metadata_of(ns.name, namespace_labels),
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata_of("berth-quota", labels, ns.name),
            "spec": {
                "hard": {
                    "requests.cpu": _cpu(ns.cpu_millis),
                    "limits.cpu": _cpu(ns.cpu_millis),
                    "requests.memory": _memory(ns.memory_mib),
                    "limits.memory": _memory(ns.memory_mib),
                    "requests.storage": f"{ns.storage_gib}Gi",
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": metadata_of("berth-limits", labels, ns.name),
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {
                            "cpu": _cpu(tier.container_default_cpu_millis),
                            "memory": _memory(tier.container_default_memory_mib),
                        },
                        "defaultRequest": {
                            "cpu": _cpu(tier.container_request_cpu_millis),
                            "memory": _memory(tier.container_request_memory_mib),
                        },
                    }
                ]
            },
        },
        *_network_policies(ns, inputs.cluster, labels),
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata_of(GITOPS_SERVICE_ACCOUNT, labels, ns.name),
        },
        role_binding(
            GITOPS_SERVICE_ACCOUNT,
            ns.name,
            TENANT_EDIT_ROLE,
            [{"kind": "ServiceAccount", "name": GITOPS_SERVICE_ACCOUNT, "namespace": ns.name}],
            labels,
        ),
    ]
    domains = sorted(
        {d.strip().lower().rstrip(".") for d in inputs.tenant.allowed_domains if d.strip()}
    )
    # The parameter of Berth's Ingress and Certificate admission policies, read here.
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata_of(DOMAINS_CONFIG, labels, ns.name),
            "data": dict.fromkeys(domains, "allowed"),
        }
    )
    if (ns.engine or inputs.engine) == FLUX:
        # Flux applies this namespace's files as the tenant's reconciler (its GitOps
        # namespace's ServiceAccount), with the same rights as the GitOps ServiceAccount.
        objects.append(
            role_binding(
                RECONCILER_SERVICE_ACCOUNT,
                ns.name,
                TENANT_EDIT_ROLE,
                [
                    {
                        "kind": "ServiceAccount",
                        "name": RECONCILER_SERVICE_ACCOUNT,
                        "namespace": inputs.tenant.gitops_namespace,
                    }
                ],
                labels,
            )
        )
    for role in ROLES:
        groups = inputs.tenant.groups.get(role, ())
        if groups:
            objects.append(
                role_binding(
                    f"berth-{role}s",
                    ns.name,
                    tier.cluster_roles[role],
                    [
                        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
                        for group in groups
                    ],
                    labels,
                )
            )
    objects += grant_objects(ns.grants, inputs.tenant.slug)
    objects += sleep_objects(ns, labels)
    return objects
