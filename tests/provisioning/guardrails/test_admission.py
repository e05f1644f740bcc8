"""Berth's ValidatingAdmissionPolicies, enforced by an API server (the stand-in) that holds
them: each case is the request itself, made as the person, controller or identity it
names (impersonation; writes dry-run). RBAC is not what these tests check, so everyone
here holds cluster-admin: whatever is refused, admission refused it."""

import re
from dataclasses import dataclass

import celpy
import pytest

from kubesandbox.testing import upstream_crds
from provisioning import guardrails
from provisioning.guardrails import bootstrap_objects
from provisioning.plan import DOMAINS_CONFIG, GITOPS_SOURCES_CONFIG, ClusterSpec
from provisioning.schema import validate_object, validate_objects
from tests.support.authz import LiveCluster, Subject, path_of

BERTH = "system:serviceaccount:berth-system:berth"
DANA = "dana@example.com"  # a payments member
GITOPS = "system:serviceaccount:payments-shop-dev:berth-gitops"
ARGOCD = "system:serviceaccount:argocd:argocd-application-controller"
CLUSTER = ClusterSpec(
    name="prod", argocd_namespace="argocd", has_kargo=True, ingress_namespace="ingress-nginx"
)
BOOTSTRAP = bootstrap_objects(CLUSTER, berth_namespace="berth-system")
NAMESPACES = {
    "payments-shop-dev": {"berth.dev/tenant": "payments"},
    "payments-gitops": {"berth.dev/tenant": "payments"},
    "payments-apps": {"berth.dev/tenant": "payments"},
    "search-web-dev": {"berth.dev/tenant": "search"},
    "quiet-app-dev": {"berth.dev/tenant": "quiet"},
    "newcomer-app-dev": {"berth.dev/tenant": "newcomer"},  # its parameters never applied
    "ingress-nginx": {},
    "flux-system": {},
}
BERTH_LABELS = {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": "payments"}
REPOSITORY = "https://git.example.com/payments/deploy.git"
FLUX = "system:serviceaccount:flux-system:kustomize-controller"
RECONCILER = "system:serviceaccount:payments-gitops:berth-reconciler"


def config_map(name, namespace, data, tenant="payments"):
    """A parameter of Berth's policies, as a tenant namespace's bundle carries it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**BERTH_LABELS, "berth.dev/tenant": tenant},
        },
        "data": data,
    }


PARAMETERS = [
    config_map(
        DOMAINS_CONFIG,
        "payments-shop-dev",
        {"payments.example.com": "allowed", "pay.example.org": "allowed"},
    ),
    config_map(DOMAINS_CONFIG, "search-web-dev", {"search.example.com": "allowed"}, "search"),
    config_map(DOMAINS_CONFIG, "quiet-app-dev", {}, "quiet"),
    config_map(GITOPS_SOURCES_CONFIG, "payments-gitops", {"repository": REPOSITORY}),
]


# cert-manager's Certificate, for the domain policy: any spec (the upstream CRD is not here).
CERTIFICATE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "certificates.cert-manager.io"},
    "spec": {
        "group": "cert-manager.io",
        "scope": "Namespaced",
        "names": {
            "kind": "Certificate",
            "plural": "certificates",
            "singular": "certificate",
            "listKind": "CertificateList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
EVERYONE_ADMIN = {  # RBAC out of the way: these tests are about admission
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "everyone-is-admin-here"},
    "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "cluster-admin",
    },
    "subjects": [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}
    ],
}


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reasons: tuple[str, ...]


def live_cluster(objects, parameters=PARAMETERS) -> LiveCluster:
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        for name, labels in NAMESPACES.items()
    ]
    existing = [
        network_policy(),
        network_policy("allow-web", labels={}),
        quota(),
        ingress("shop.payments.example.com"),
        kargo_namespace(),
        root_application(),
        root_kustomization(),
        *parameters,
    ]
    return LiveCluster(
        [CERTIFICATE_CRD, EVERYONE_ADMIN, *namespaces, *objects, *existing],
        crds=upstream_crds("argocd", "flux"),
        namespaces=("argocd", "kargo", "berth-system", "platform"),
    )


@pytest.fixture(scope="module")
def cluster():
    live = live_cluster(BOOTSTRAP)
    yield live
    live.close()


def subject(user: str, groups=()) -> Subject:
    if user.startswith("system:serviceaccount:"):
        _, _, namespace, name = user.split(":")
        account = Subject.service_account(namespace, name)
        return Subject(account.username, (*account.groups, *groups, "system:authenticated"))
    return Subject.user(user, *groups, "system:authenticated")


def admitted(cluster, operation, user, *, obj=None, old=None, groups=()) -> Verdict:
    """The request for `operation`, made as `user`: CREATE posts `obj`, UPDATE puts `obj`
    over `old` (which exists), DELETE deletes `old`."""
    method, target, body = {
        "CREATE": ("POST", obj, obj),
        "UPDATE": ("PUT", obj, obj),
        "DELETE": ("DELETE", old, None),
    }[operation]
    path = path_of(target, named=operation != "CREATE")
    verdict, message = cluster.attempt(subject(user, groups), method, path, body)
    assert verdict != "RBAC", message
    return Verdict(verdict == "allowed", (message,) if message else ())


def network_policy(name="berth-default-deny", labels=BERTH_LABELS, ingress=None):
    spec = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    if ingress is not None:
        spec["ingress"] = ingress
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": "payments-shop-dev", "labels": dict(labels)},
        "spec": spec,
    }


def ingress(*hosts, tls=(), namespace="payments-shop-dev", default_backend=False):
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    spec = {
        "rules": [
            {
                "host": host,
                "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
            }
            if host
            else {"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
            for host in hosts
        ]
    }
    if not hosts:
        spec = {}
    if tls:
        spec["tls"] = [{"hosts": list(tls), "secretName": "web-tls"}]
    if default_backend:
        spec["defaultBackend"] = backend
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": spec,
    }


def quota(cpu="1"):
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": "berth-quota",
            "namespace": "payments-shop-dev",
            "labels": BERTH_LABELS,
        },
        "spec": {"hard": {"requests.cpu": cpu}},
    }


def kargo_namespace():
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "payments-shop-kargo", "labels": BERTH_LABELS},
    }


def root_application(path="clusters/prod", labels=BERTH_LABELS, status=None):
    root = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "berth-root", "namespace": "payments-apps", "labels": dict(labels)},
        "spec": {
            "project": "payments",
            "source": {"repoURL": REPOSITORY, "targetRevision": "main", "path": path},
            "destination": {
                "server": "https://kubernetes.default.svc",
                "namespace": "payments-apps",
            },
        },
    }
    if status:
        root["status"] = status
    return root


def root_kustomization(**spec):
    return kustomization(
        "berth-root",
        **{"serviceAccountName": "berth-reconciler", "targetNamespace": "payments-gitops", **spec},
        labels=BERTH_LABELS,
    )


def kustomization(name="app", namespace="payments-gitops", labels=None, **spec):
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": {
            "interval": "10m",
            "path": "./",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "payments"},
            **spec,
        },
    }


def git_repository(url, namespace="payments-gitops"):
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "more", "namespace": namespace},
        "spec": {"interval": "1m", "url": url},
    }


def certificate(*names, common_name=None):
    spec = {
        "secretName": "web-tls",
        "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
        "dnsNames": list(names),
    }
    if common_name:
        spec["commonName"] = common_name
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "web", "namespace": "payments-shop-dev"},
        "spec": spec,
    }


# --- Berth's objects are Berth's ------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "user", "obj", "old", "allowed"),
    [
        pytest.param(
            "UPDATE",
            BERTH,
            network_policy(),
            network_policy(),
            True,
            id="berth-updates-its-network-policy",
        ),
        pytest.param(
            "DELETE", BERTH, None, network_policy(), True, id="berth-deletes-its-network-policy"
        ),
        pytest.param(
            "DELETE",
            DANA,
            None,
            network_policy(),
            False,
            id="tenant-user-deletes-berth-network-policy",
        ),
        pytest.param(
            "UPDATE",
            DANA,
            network_policy(ingress=[{}]),
            network_policy(),
            False,
            id="tenant-user-opens-berth-default-deny",
        ),
        pytest.param(
            "UPDATE",
            DANA,
            network_policy(labels={}),
            network_policy(),
            False,
            id="tenant-user-removes-the-berth-label",
        ),
        pytest.param(
            "DELETE",
            DANA,
            None,
            network_policy("allow-web", labels={}),
            True,
            id="tenant-user-deletes-own-unlabelled-network-policy",
        ),
        pytest.param(
            "CREATE",
            DANA,
            network_policy("allow-more", labels={}),
            None,
            True,
            id="tenant-user-adds-a-network-policy",
        ),
        pytest.param(
            "CREATE",
            DANA,
            network_policy("fake", labels=BERTH_LABELS),
            None,
            False,
            id="tenant-user-labels-a-new-object-as-berths",
        ),
        pytest.param(
            "UPDATE",
            DANA,
            network_policy("allow-web"),
            network_policy("allow-web", labels={}),
            False,
            id="tenant-user-relabels-own-object-as-berths",
        ),
        pytest.param(
            "DELETE",
            GITOPS,
            None,
            network_policy(),
            False,
            id="gitops-service-account-deletes-berth-network-policy",
        ),
        pytest.param(
            "UPDATE",
            ARGOCD,
            network_policy(ingress=[{}]),
            network_policy(),
            False,
            id="argocd-without-impersonation-overwrites-berth-network-policy",
        ),
        pytest.param(
            "DELETE",
            "system:serviceaccount:kube-system:namespace-controller",
            None,
            network_policy(),
            True,
            id="namespace-controller-empties-a-deleted-namespace",
        ),
    ],
)
def test_protect_policy(cluster, operation, user, obj, old, allowed):
    result = admitted(cluster, operation, user, obj=obj, old=old)
    assert result.allowed is allowed, result.reasons
    if not allowed:
        assert any("only Berth creates, changes or deletes it" in r for r in result.reasons)


def test_cluster_admins_are_refused_too(cluster):
    """Admission is not bypassed by system:masters (RBAC is): break glass by deleting the
    binding, never by editing Berth's objects in place."""
    role = next(o for o in BOOTSTRAP if o["kind"] == "ClusterRole")
    assert not admitted(
        cluster, "DELETE", "kubernetes-admin", old=role, groups=["system:masters"]
    ).allowed


def test_quota_is_protected_from_the_tenants_gitops_identity(cluster):
    assert not admitted(cluster, "UPDATE", GITOPS, obj=quota("64"), old=quota()).allowed
    assert admitted(cluster, "UPDATE", BERTH, obj=quota("64"), old=quota()).allowed


def test_kargo_adopts_its_project_namespace_only_where_kargo_runs(cluster):
    namespace = kargo_namespace()
    adopted = {
        **namespace,
        "metadata": {
            **namespace["metadata"],
            "labels": {**namespace["metadata"]["labels"], "kargo.akuity.io/project": "true"},
        },
    }
    kargo = guardrails.KARGO_CONTROLLER
    assert admitted(cluster, "UPDATE", kargo, obj=adopted, old=namespace).allowed
    without = live_cluster(
        bootstrap_objects(
            ClusterSpec(
                name="x", argocd_namespace="argocd", has_kargo=False, ingress_namespace="i"
            ),
            berth_namespace="berth-system",
        )
    )
    try:
        assert not admitted(without, "UPDATE", kargo, obj=adopted, old=namespace).allowed
    finally:
        without.close()


def test_the_exempt_identity_follows_the_berth_namespace():
    elsewhere = live_cluster(bootstrap_objects(CLUSTER, berth_namespace="platform"))
    try:
        assert admitted(
            elsewhere, "DELETE", "system:serviceaccount:platform:berth", old=network_policy()
        ).allowed
        assert not admitted(elsewhere, "DELETE", BERTH, old=network_policy()).allowed
    finally:
        elsewhere.close()


# --- domains ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "allowed"),
    [
        pytest.param(ingress("shop.payments.example.com"), True, id="ingress-subdomain"),
        pytest.param(ingress("payments.example.com"), True, id="ingress-the-domain-itself"),
        pytest.param(ingress("*.payments.example.com"), True, id="ingress-wildcard-under-domain"),
        pytest.param(ingress("api.pay.example.org"), True, id="ingress-second-domain-any-case"),
        pytest.param(ingress("shop.search.example.com"), False, id="ingress-other-tenants-domain"),
        pytest.param(ingress("evilpayments.example.com"), False, id="ingress-look-alike"),
        pytest.param(ingress("payments.example.com.evil.io"), False, id="ingress-suffix-trick"),
        pytest.param(ingress("*.example.com"), False, id="ingress-wildcard-above-domain"),
        pytest.param(
            ingress("shop.payments.example.com", "www.example.net"),
            False,
            id="ingress-one-bad-rule",
        ),
        pytest.param(ingress(None), False, id="ingress-rule-without-host"),
        pytest.param(
            ingress("shop.payments.example.com", tls=["shop.payments.example.com"]),
            True,
            id="ingress-tls-inside",
        ),
        pytest.param(
            ingress("shop.payments.example.com", tls=["bank.example.com"]),
            False,
            id="ingress-tls-outside",
        ),
        pytest.param(ingress(default_backend=True), False, id="ingress-catch-all-default-backend"),
        pytest.param(
            ingress("shop.search.example.com", namespace="search-web-dev"),
            True,
            id="ingress-each-tenant-its-own-domains",
        ),
        pytest.param(
            ingress("shop.payments.example.com", namespace="quiet-app-dev"),
            False,
            id="ingress-tenant-without-domains",
        ),
        pytest.param(
            ingress("newcomer.example.com", namespace="newcomer-app-dev"),
            False,
            id="ingress-namespace-without-its-domains-fails-closed",
        ),
        pytest.param(
            ingress("anything.example.com", namespace="ingress-nginx"),
            True,
            id="ingress-platform-namespace-not-a-tenants",
        ),
        pytest.param(
            certificate("shop.payments.example.com", "payments.example.com"),
            True,
            id="certificate-inside",
        ),
        pytest.param(
            certificate("shop.payments.example.com", "bank.example.com"),
            False,
            id="certificate-one-bad-dns-name",
        ),
        pytest.param(
            certificate("shop.payments.example.com", common_name="bank.example.com"),
            False,
            id="certificate-bad-common-name",
        ),
    ],
)
def test_domain_policies(cluster, obj, allowed):
    created = {**obj, "metadata": {**obj["metadata"], "name": "new"}}
    result = admitted(cluster, "CREATE", DANA, obj=created)
    assert result.allowed is allowed, result.reasons


def test_an_update_is_checked_like_a_create(cluster):
    good, bad = ingress("shop.payments.example.com"), ingress("bank.example.com")
    assert not admitted(cluster, "UPDATE", DANA, obj=bad, old=good).allowed
    assert admitted(cluster, "UPDATE", DANA, obj=good, old=good).allowed


def test_a_missing_domain_list_refuses_instead_of_allowing():
    without = live_cluster(BOOTSTRAP, parameters=PARAMETERS[1:])
    try:
        result = admitted(
            without,
            "CREATE",
            DANA,
            obj={
                **ingress("shop.payments.example.com"),
                "metadata": {"name": "new", "namespace": "payments-shop-dev"},
            },
        )
    finally:
        without.close()
    assert not result.allowed
    assert "no params found" in result.reasons[0]


def test_the_tenant_cannot_widen_its_own_domain_list(cluster):
    mine = PARAMETERS[0]
    wider = {**mine, "data": {**mine["data"], "bank.example.com": "allowed"}}
    result = admitted(cluster, "UPDATE", DANA, obj=wider, old=mine)
    assert not result.allowed
    assert any("only Berth creates, changes or deletes it" in r for r in result.reasons)


# --- the tenant's roots --------------------------------------------------------------------


ARGOCD_STATUS = {"sync": {"status": "Synced"}, "health": {"status": "Healthy"}}


@pytest.mark.parametrize(
    ("operation", "user", "obj", "old", "allowed"),
    [
        pytest.param(
            "UPDATE",
            ARGOCD,
            root_application(status=ARGOCD_STATUS),
            root_application(),
            True,
            id="argocd-records-the-roots-state",
        ),
        pytest.param(
            "UPDATE",
            ARGOCD,
            root_application(path="clusters/other"),
            root_application(),
            False,
            id="argocd-syncing-a-root-over-the-root",
        ),
        pytest.param(
            "UPDATE",
            DANA,
            root_application(path="/"),
            root_application(),
            False,
            id="tenant-user-points-the-root-elsewhere",
        ),
        pytest.param(
            "UPDATE",
            DANA,
            root_application(labels={}),
            root_application(),
            False,
            id="tenant-user-unlabels-the-root",
        ),
        pytest.param(
            "DELETE", DANA, None, root_application(), False, id="tenant-user-deletes-the-root"
        ),
        pytest.param(
            "CREATE",
            ARGOCD,
            {
                **root_application(),
                "metadata": {**root_application()["metadata"], "name": "another-root"},
            },
            None,
            False,
            id="a-second-root-labelled-as-berths",
        ),
        pytest.param(
            "UPDATE",
            BERTH,
            root_application(path="clusters/moved"),
            root_application(),
            True,
            id="berth-moves-its-root",
        ),
        pytest.param(
            "UPDATE",
            FLUX,
            root_kustomization(suspend=True),
            root_kustomization(),
            False,
            id="suspending-the-root-is-a-spec-change",
        ),
        pytest.param(
            "UPDATE",
            RECONCILER,
            root_kustomization(serviceAccountName="default"),
            root_kustomization(),
            False,
            id="the-tenants-reconciler-swaps-the-roots-account",
        ),
        pytest.param(
            "DELETE",
            "system:serviceaccount:kube-system:namespace-controller",
            None,
            root_kustomization(),
            True,
            id="namespace-controller-empties-the-namespace",
        ),
    ],
)
def test_roots_policy(cluster, operation, user, obj, old, allowed):
    result = admitted(cluster, operation, user, obj=obj, old=old)
    assert result.allowed is allowed, result.reasons
    if not allowed:
        assert any("one of the tenant's roots" in r for r in result.reasons), result.reasons


# --- Flux as the tenant --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "allowed", "why"),
    [
        pytest.param(
            kustomization(
                serviceAccountName="berth-reconciler", targetNamespace="payments-shop-dev"
            ),
            True,
            "",
            id="kustomization-as-the-reconciler",
        ),
        pytest.param(
            kustomization(targetNamespace="payments-shop-dev"),
            False,
            "must set spec.serviceAccountName",
            id="kustomization-without-account",
        ),
        pytest.param(
            kustomization(
                serviceAccountName="berth-reconciler",
                sourceRef={
                    "kind": "GitRepository",
                    "name": "flux-system",
                    "namespace": "flux-system",
                },
            ),
            False,
            "in its own namespace only",
            id="kustomization-platform-source",
        ),
        pytest.param(git_repository(REPOSITORY), True, "", id="source-the-tenants-repository"),
        pytest.param(
            git_repository("https://git.example.com/platform/infra.git"),
            False,
            "only the tenant's own repository",
            id="source-another-repository",
        ),
        pytest.param(
            git_repository(REPOSITORY, namespace="payments-shop-dev"),
            False,
            "no params found",
            id="source-where-berth-put-no-list",
        ),
        pytest.param(
            git_repository("https://git.example.com/platform/infra.git", namespace="flux-system"),
            True,
            "",
            id="the-platforms-own-namespace-is-not-a-tenants",
        ),
    ],
)
def test_flux_policy(cluster, obj, allowed, why):
    result = admitted(cluster, "CREATE", RECONCILER, obj=obj)
    assert result.allowed is allowed, result.reasons
    if why:
        assert any(why in r for r in result.reasons), result.reasons


# --- the policies themselves -------------------------------------------------------------


def policies():
    return [o for o in BOOTSTRAP if o["kind"] == "ValidatingAdmissionPolicy"]


def test_the_policy_objects_validate_against_the_kubernetes_schema():
    admission = [o for o in BOOTSTRAP if o["apiVersion"].startswith("admissionregistration")]
    assert {o["kind"] for o in admission} == {
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
    assert validate_objects(admission) == {}
    broken = {**policies()[0], "spec": {**policies()[0]["spec"], "validations": [{"expr": "x"}]}}
    assert [str(e) for e in validate_object(broken)] == [
        "spec.validations[0].expr: unknown field 'expr' (V1Validation)",
        "spec.validations[0].expression: required field is missing",
    ]


def expressions():
    for policy in policies():
        spec = policy["spec"]
        for item in [
            *spec.get("validations", []),
            *spec.get("matchConditions", []),
            *spec.get("variables", []),
        ]:
            yield policy["metadata"]["name"], item["expression"]


# Standard CEL that both cel-go (Kubernetes) and cel-python evaluate alike. Kubernetes'
# extension libraries (strings.split, lowerAscii, lists, optional `?.`, ...) are left out:
# cel-python 0.5 does not know them.
STANDARD_CEL = {"has", "all", "exists", "endsWith", "size"}


@pytest.mark.parametrize(("policy", "expression"), list(expressions()))
def test_every_expression_is_standard_cel_that_cel_python_compiles(policy, expression):
    environment = celpy.Environment()
    environment.compile(expression)
    called = set(re.findall(r"([A-Za-z_]\w*)\s*\(", expression))
    assert called <= STANDARD_CEL, f"{policy}: {called - STANDARD_CEL}"
    assert "?." not in expression and ".?" not in expression
