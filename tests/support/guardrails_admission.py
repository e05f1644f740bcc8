"""The world of Berth's admission tests: an API server (the stand-in) holding Berth's
ValidatingAdmissionPolicies, the tenant namespaces and their parameters, and `admitted`,
which makes a request as the person, controller or identity it names (impersonation;
writes dry-run). RBAC is out of the way (everyone holds cluster-admin), so whatever is
refused, admission refused it. Builders for the objects the requests carry follow."""

from dataclasses import dataclass

from kubesandbox.testing import upstream_crds
from provisioning.guardrails import bootstrap_objects
from provisioning.plan import DOMAINS_CONFIG, GITOPS_SOURCES_CONFIG, ClusterSpec
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
# Empties a namespace being deleted: every policy lets it delete Berth's objects.
NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace-controller"


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

    def expect(self, allowed: bool, reason: str = "") -> None:
        """Allowed, or refused as expected (saying `reason` where one is given)."""
        assert self.allowed is allowed, self.reasons
        if not allowed and reason:
            assert any(reason in said for said in self.reasons), self.reasons


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
