"""ValidatingAdmissionPolicies in CEL: Berth's objects are Berth's alone, and a tenant's
Ingress hosts and Certificate names stay inside its allowed domains; and the bootstrap
objects a cluster gets once (roles and policies).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from provisioning.guardrails.roles import ADMISSION_GROUP, PART_OF, RBAC_GROUP, cluster_roles
from provisioning.plan import LABEL_TENANT, MANAGED_BY, ClusterSpec, TenantSpec

PROTECT_POLICY = "berth-protect-managed"
INGRESS_DOMAINS_POLICY = "berth-ingress-domains"
CERTIFICATE_DOMAINS_POLICY = "berth-certificate-domains"
DOMAINS_PARAM_PREFIX = "berth-domains-tenant-"
UNLISTED = "unlisted-tenants"
BERTH_SERVICE_ACCOUNT = "berth"

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
        ("configmaps", "limitranges", "namespaces", "resourcequotas", "serviceaccounts"),
    ),
    ("networking.k8s.io", "v1", ("networkpolicies",)),
    (RBAC_GROUP, "v1", ("clusterroles", "rolebindings")),
    ("argoproj.io", "v1alpha1", ("appprojects",)),
    ("kargo.akuity.io", "v1alpha1", ("projectconfigs", "projects")),
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


def protect_policy(exempt_users: Iterable[str]) -> dict[str, Any]:
    users = ", ".join(_cel_string(user) for user in exempt_users)
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": PROTECT_POLICY, "labels": berth_labels()},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                # Old or new object labelled: also catches removing the label, and a team
                # labelling its own object as Berth's.
                "objectSelector": {"matchLabels": {MANAGED_BY: "berth"}},
                "resourceRules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": [version],
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "resources": list(resources),
                    }
                    for group, version, resources in PROTECTED_RESOURCES
                ],
            },
            "validations": [
                {
                    "expression": f"request.userInfo.username in [{users}]",
                    "message": (
                        "This object is Berth's (app.kubernetes.io/managed-by: berth): only "
                        "Berth creates, changes or deletes it. Ask for the change in Berth."
                    ),
                    "reason": "Forbidden",
                }
            ],
        },
    }


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


def _domains_policy(name: str, group: str, resource: str, validations: Iterable[dict]) -> dict:
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": berth_labels()},
        "spec": {
            "failurePolicy": "Fail",
            # The domains: a ConfigMap in Berth's namespace, one per tenant, whose data keys
            # are the domains (values are ignored), named by each tenant's binding.
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [resource],
                    }
                ]
            },
            "validations": [dict(v) for v in validations],
        },
    }


def admission_policies(exempt_users: Iterable[str]) -> list[dict[str, Any]]:
    return [
        protect_policy(exempt_users),
        _domains_policy(
            INGRESS_DOMAINS_POLICY, "networking.k8s.io", "ingresses", INGRESS_VALIDATIONS
        ),
        _domains_policy(
            CERTIFICATE_DOMAINS_POLICY, "cert-manager.io", "certificates", CERTIFICATE_VALIDATIONS
        ),
    ]


def domains_param(tenant: str, domains: Iterable[str], berth_namespace: str) -> dict[str, Any]:
    """The tenant's allowed domains as a ConfigMap: one data key per domain."""
    config_map: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{DOMAINS_PARAM_PREFIX}{tenant}",
            "namespace": berth_namespace,
            "labels": berth_labels(**({LABEL_TENANT: tenant} if tenant != UNLISTED else {})),
        },
    }
    data = {domain.strip().lower().rstrip("."): "allowed" for domain in domains if domain.strip()}
    if data:
        config_map["data"] = dict(sorted(data.items()))
    return config_map


def _binding(
    name: str, policy: str, *, namespace_selector: dict | None, param: str = "", param_ns: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {"policyName": policy, "validationActions": ["Deny"]}
    if param:
        spec["paramRef"] = {
            "name": param,
            "namespace": param_ns,
            # A tenant whose domains are missing gets no host at all, never any host.
            "parameterNotFoundAction": "Deny",
        }
    if namespace_selector is not None:
        spec["matchResources"] = {"namespaceSelector": namespace_selector}
    return {
        "apiVersion": f"{ADMISSION_GROUP}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": berth_labels()},
        "spec": spec,
    }


def domain_bindings(tenant: str, berth_namespace: str, selector: dict) -> list[dict[str, Any]]:
    param = f"{DOMAINS_PARAM_PREFIX}{tenant}"
    return [
        _binding(
            f"{policy}-tenant-{tenant}",
            policy,
            namespace_selector=selector,
            param=param,
            param_ns=berth_namespace,
        )
        for policy in (INGRESS_DOMAINS_POLICY, CERTIFICATE_DOMAINS_POLICY)
    ]


def bootstrap_objects(
    cluster: ClusterSpec,
    tenants: Iterable[TenantSpec],
    *,
    berth_namespace: str,
    berth_user: str = "",
    extra_exempt_users: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The cluster-wide objects Berth installs once per cluster, in apply order: its tenant
    ClusterRoles, Berth's namespace with each tenant's domains, the admission policies and
    their bindings. Idempotent: apply again after onboarding a tenant or changing domains."""
    tenants = sorted(tenants, key=lambda t: t.slug)
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
    objects += [domains_param(t.slug, t.allowed_domains, berth_namespace) for t in tenants]
    # A tenant onboarded after the last install has no binding of its own yet: its
    # namespaces get an empty domain list (every host refused) until guardrails are
    # installed again, never no check at all.
    objects.append(domains_param(UNLISTED, (), berth_namespace))
    objects += admission_policies(exempt)
    objects.append(_binding(PROTECT_POLICY, PROTECT_POLICY, namespace_selector=None))
    for tenant in tenants:
        objects += domain_bindings(
            tenant.slug, berth_namespace, {"matchLabels": {LABEL_TENANT: tenant.slug}}
        )
    unlisted_selector: dict[str, Any] = {
        "matchExpressions": [{"key": LABEL_TENANT, "operator": "Exists"}]
    }
    if tenants:
        unlisted_selector["matchExpressions"].append(
            {"key": LABEL_TENANT, "operator": "NotIn", "values": [t.slug for t in tenants]}
        )
    objects += domain_bindings(UNLISTED, berth_namespace, unlisted_selector)
    return objects
