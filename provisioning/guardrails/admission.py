"""ValidatingAdmissionPolicies in CEL: Berth's objects are Berth's alone (its roots may be
reconciled by their controllers, never changed by anyone else), a tenant's Ingress hosts and
Certificate names stay inside its allowed domains, and a tenant's Flux objects run as the
tenant from the tenant's repository; and the bootstrap objects a cluster gets once (roles,
policies, bindings).

The policies' parameters are per tenant namespace: ConfigMaps Berth applies with each
namespace (`berth-allowed-domains`, `berth-gitops-sources`; the bindings name them without
a namespace, so the API server reads the one in the request's namespace). A namespace
without one gets nothing through (parameterNotFoundAction: Deny); one a tenant might change
is Berth's, so the protect policy refuses the change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from provisioning.guardrails.roles import ADMISSION_GROUP, PART_OF, RBAC_GROUP, cluster_roles
from provisioning.plan import (
    DOMAINS_CONFIG,
    GITOPS_SOURCES_CONFIG,
    LABEL_TENANT,
    MANAGED_BY,
    ClusterSpec,
)

PROTECT_POLICY = "berth-protect-managed"
ROOTS_POLICY = "berth-protect-roots"
INGRESS_DOMAINS_POLICY = "berth-ingress-domains"
CERTIFICATE_DOMAINS_POLICY = "berth-certificate-domains"
FLUX_POLICY = "berth-flux-tenancy"
BERTH_SERVICE_ACCOUNT = "berth"
TENANT_NAMESPACES = {"matchExpressions": [{"key": LABEL_TENANT, "operator": "Exists"}]}

# Besides Berth, who must be able to change or delete Berth's objects: the controllers that
# empty a namespace Berth deletes and collect what it owned (as ServiceAccounts, and as
# kube-controller-manager itself when it runs without --use-service-account-credentials).
CONTROLLER_USERS = (
    "system:serviceaccount:kube-system:namespace-controller",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    "system:kube-controller-manager",
)
# Kargo's management controller adopts the project namespace Berth labels for it (patches
# it) and deletes the Project when that namespace goes.
KARGO_CONTROLLER = "system:serviceaccount:kargo:kargo-management-controller"

# Every kind Berth labels as its own, by API group and version: the protect policy's scope.
# (tests check it covers every kind a plan or the bootstrap applies.)
PROTECTED_RESOURCES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "",
        "v1",
        ("configmaps", "limitranges", "namespaces", "resourcequotas", "secrets", "serviceaccounts"),
    ),
    ("networking.k8s.io", "v1", ("networkpolicies",)),
    (RBAC_GROUP, "v1", ("clusterroles", "rolebindings", "roles")),
    ("argoproj.io", "v1alpha1", ("appprojects",)),
    ("kargo.akuity.io", "v1alpha1", ("projectconfigs", "projects")),
)
# The tenant's roots (provisioning.plan.tenant): their controllers write status, finalizers
# and annotations on the object itself, so they are guarded apart: anyone may change those,
# only Berth what they apply and from where (spec) and whose they are (labels).
ROOT_RESOURCES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("argoproj.io", "v1alpha1", ("applications",)),
    ("kustomize.toolkit.fluxcd.io", "v1", ("kustomizations",)),
    ("source.toolkit.fluxcd.io", "v1", ("gitrepositories",)),
)


def berth_username(namespace: str, service_account: str = BERTH_SERVICE_ACCOUNT) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


def _cel_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _within_domains(host: str) -> str:
    """CEL: `host` is one of the param's domains or a name under one (wildcards included:
    `*.shop.example.com` ends with `.example.com`). Standard CEL only (has, exists on a
    map's keys, endsWith), so cel-python and the API server agree."""
    return f"(has(params.data) && params.data.exists(d, {host} == d || {host}.endsWith('.' + d)))"


def berth_labels(**extra: str) -> dict[str, str]:
    return {MANAGED_BY: "berth", PART_OF: "berth", **extra}


def _rules(
    resources: Iterable[tuple[str, str, tuple[str, ...]]], operations: Iterable[str]
) -> list[dict[str, Any]]:
    return [
        {
            "apiGroups": [group],
            "apiVersions": [version],
            "operations": list(operations),
            "resources": list(names),
        }
        for group, version, names in resources
    ]


def _policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": berth_labels()},
        "spec": {"failurePolicy": "Fail", **spec},
    }


def protect_policy(exempt_users: Iterable[str]) -> dict[str, Any]:
    return _berths_objects_policy(
        PROTECT_POLICY,
        PROTECTED_RESOURCES,
        allowed=_by_one_of(exempt_users),
        message=(
            "This object is Berth's (app.kubernetes.io/managed-by: berth): only "
            "Berth creates, changes or deletes it. Ask for the change in Berth."
        ),
    )


def roots_policy(exempt_users: Iterable[str]) -> dict[str, Any]:
    return _berths_objects_policy(
        ROOTS_POLICY,
        ROOT_RESOURCES,
        allowed=(
            f"{_by_one_of(exempt_users)} || "
            "(request.operation == 'UPDATE' && object.spec == oldObject.spec && "
            "(has(object.metadata.labels) ? object.metadata.labels : {}) == "
            "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}))"
        ),
        message=(
            "This is one of the tenant's roots, Berth's (app.kubernetes.io/managed-by: "
            "berth): its controller may record its state, but only Berth creates, "
            "changes or deletes what it applies. Change it through Berth."
        ),
    )


def _by_one_of(users: Iterable[str]) -> str:
    """CEL: the request is made by one of these users."""
    return f"request.userInfo.username in [{', '.join(_cel_string(user) for user in users)}]"


def _berths_objects_policy(
    name: str,
    resources: Iterable[tuple[str, str, tuple[str, ...]]],
    *,
    allowed: str,
    message: str,
) -> dict[str, Any]:
    """Creating, changing or deleting an object of these resources labelled as Berth's is
    refused with `message` unless `allowed` (CEL) holds."""
    return _policy(
        name,
        {
            "matchConstraints": {
                # Old or new object labelled: also catches removing the label, and a team
                # labelling its own object as Berth's.
                "objectSelector": {"matchLabels": {MANAGED_BY: "berth"}},
                "resourceRules": _rules(resources, ("CREATE", "UPDATE", "DELETE")),
            },
            "validations": [{"expression": allowed, "message": message, "reason": "Forbidden"}],
        },
    )


INGRESS_VALIDATIONS = (
    {
        "expression": "!has(object.spec.rules) || object.spec.rules.all(r, has(r.host) && "
        + _within_domains("r.host")
        + ")",
        "message": "Every Ingress rule must name a host in the tenant's allowed domains "
        "(a rule without a host would answer for every name).",
        "reason": "Forbidden",
    },
    {
        "expression": "!has(object.spec.tls) || object.spec.tls.all(t, !has(t.hosts) || "
        "t.hosts.all(h, " + _within_domains("h") + "))",
        "message": "Every TLS host of an Ingress must be in the tenant's allowed domains.",
        "reason": "Forbidden",
    },
    {
        "expression": "!has(object.spec.defaultBackend) || "
        "(has(object.spec.rules) && size(object.spec.rules) > 0)",
        "message": "An Ingress with only a default backend would catch every host name on "
        "the shared ingress controller; name hosts in rules.",
        "reason": "Forbidden",
    },
)

CERTIFICATE_VALIDATIONS = (
    {
        "expression": "!has(object.spec.dnsNames) || object.spec.dnsNames.all(n, "
        + _within_domains("n")
        + ")",
        "message": "Every dnsName of a Certificate must be in the tenant's allowed domains.",
        "reason": "Forbidden",
    },
    {
        "expression": "!has(object.spec.commonName) || "
        + _within_domains("object.spec.commonName"),
        "message": "A Certificate's commonName must be in the tenant's allowed domains.",
        "reason": "Forbidden",
    },
)


def _domains_policy(
    name: str, group: str, resource: str, validations: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    # The domains: the ConfigMap berth-allowed-domains in the request's namespace, whose data
    # keys are the domains (values are ignored).
    return _policy(
        name,
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": _rules([(group, "v1", (resource,))], ("CREATE", "UPDATE")),
            },
            "validations": [dict(v) for v in validations],
        },
    )


FLUX_SERVICE_ACCOUNT = (
    "!(request.resource.resource in ['kustomizations', 'helmreleases']) || "
    "(has(object.spec.serviceAccountName) && object.spec.serviceAccountName != '')"
)
FLUX_SAME_NAMESPACE = (
    "request.resource.resource != 'kustomizations' || "
    "!has(object.spec.sourceRef.namespace) || "
    "object.spec.sourceRef.namespace == object.metadata.namespace"
)
FLUX_CHART_SAME_NAMESPACE = (
    "request.resource.resource != 'helmreleases' || "
    "((!has(object.spec.chart) || !has(object.spec.chart.spec.sourceRef.namespace) || "
    "object.spec.chart.spec.sourceRef.namespace == object.metadata.namespace) && "
    "(!has(object.spec.chartRef) || !has(object.spec.chartRef.namespace) || "
    "object.spec.chartRef.namespace == object.metadata.namespace))"
)
FLUX_OWN_REPOSITORY = (
    "!(request.resource.resource in ['gitrepositories', 'ocirepositories']) || "
    "(has(params.data) && params.data.exists(k, params.data[k] == object.spec.url))"
)


def flux_policy() -> dict[str, Any]:
    """In a tenant's namespaces Flux applies as the tenant and reads the tenant's repository
    only: what kustomize-controller's --default-service-account and
    --no-cross-namespace-refs do cluster-wide, enforced here whatever flags it runs with."""
    return _policy(
        FLUX_POLICY,
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": _rules(
                    [
                        ("kustomize.toolkit.fluxcd.io", "v1", ("kustomizations",)),
                        ("helm.toolkit.fluxcd.io", "v2", ("helmreleases",)),
                        ("source.toolkit.fluxcd.io", "v1", ("gitrepositories", "ocirepositories")),
                    ],
                    ("CREATE", "UPDATE"),
                ),
            },
            "validations": [
                {
                    "expression": FLUX_SERVICE_ACCOUNT,
                    "reason": "Forbidden",
                    "message": "A Kustomization or HelmRelease in a tenant's namespace must set "
                    "spec.serviceAccountName: without it Flux applies with its own "
                    "cluster-wide rights.",
                },
                {
                    "expression": FLUX_SAME_NAMESPACE,
                    "reason": "Forbidden",
                    "message": "A Kustomization in a tenant's namespace reads a source in its own "
                    "namespace only (spec.sourceRef.namespace).",
                },
                {
                    "expression": FLUX_CHART_SAME_NAMESPACE,
                    "reason": "Forbidden",
                    "message": "A HelmRelease in a tenant's namespace reads a chart source in its "
                    "own namespace only.",
                },
                {
                    "expression": FLUX_OWN_REPOSITORY,
                    "reason": "Forbidden",
                    "message": "A GitRepository or OCIRepository in a tenant's namespace may read "
                    "only the tenant's own repository (the ConfigMap "
                    "berth-gitops-sources of its GitOps namespace lists it).",
                },
            ],
        },
    )


def admission_policies(exempt_users: Iterable[str]) -> list[dict[str, Any]]:
    exempt = list(exempt_users)
    return [
        protect_policy(exempt),
        roots_policy(exempt),
        _domains_policy(
            INGRESS_DOMAINS_POLICY, "networking.k8s.io", "ingresses", INGRESS_VALIDATIONS
        ),
        _domains_policy(
            CERTIFICATE_DOMAINS_POLICY, "cert-manager.io", "certificates", CERTIFICATE_VALIDATIONS
        ),
        flux_policy(),
    ]


def binding(policy: str, *, param: str = "") -> dict[str, Any]:
    """Every policy binds once; those with a parameter read it from the request's namespace
    (paramRef without a namespace) and only in tenants' namespaces."""
    spec: dict[str, Any] = {"policyName": policy, "validationActions": ["Deny"]}
    if param:
        # A namespace whose parameter is missing gets nothing through, never everything.
        spec["paramRef"] = {"name": param, "parameterNotFoundAction": "Deny"}
        spec["matchResources"] = {"namespaceSelector": TENANT_NAMESPACES}
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy, "labels": berth_labels()},
        "spec": spec,
    }


def policy_bindings() -> list[dict[str, Any]]:
    return [
        binding(PROTECT_POLICY),
        binding(ROOTS_POLICY),
        binding(INGRESS_DOMAINS_POLICY, param=DOMAINS_CONFIG),
        binding(CERTIFICATE_DOMAINS_POLICY, param=DOMAINS_CONFIG),
        binding(FLUX_POLICY, param=GITOPS_SOURCES_CONFIG),
    ]


def bootstrap_objects(
    cluster: ClusterSpec,
    *,
    berth_namespace: str,
    berth_user: str = "",
    extra_exempt_users: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The cluster-wide objects Berth installs once per cluster, in apply order: its
    ClusterRoles, Berth's namespace, the admission policies and their bindings. The same
    for every tenant (their parameters come with their namespaces): install once."""
    exempt = [berth_user or berth_username(berth_namespace), *CONTROLLER_USERS]
    if cluster.has_kargo:
        exempt.append(KARGO_CONTROLLER)
    exempt += [user for user in extra_exempt_users if user not in exempt]

    objects: list[dict[str, Any]] = cluster_roles()
    objects.append(
        # Not labelled managed-by: it may be the namespace Berth itself runs in.
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": berth_namespace, "labels": {PART_OF: "berth"}},
        }
    )
    objects += admission_policies(exempt)
    objects += policy_bindings()
    return objects
