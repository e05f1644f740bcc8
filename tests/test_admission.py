"""Berth's ValidatingAdmissionPolicies, their CEL evaluated with cel-python over admission
requests shaped as the API server sends them (tests.admission_model.allowed_by_admission)."""

import re

import celpy
import pytest

from provisioning import guardrails
from provisioning.guardrails import bootstrap_objects
from provisioning.plan import ClusterSpec, TenantSpec
from provisioning.schema import validate_object, validate_objects
from tests.admission_model import admission_request, allowed_by_admission

BERTH = "system:serviceaccount:berth-system:berth"
DANA = "dana@example.com"  # a payments member
GITOPS = "system:serviceaccount:payments-shop-dev:berth-gitops"
ARGOCD = "system:serviceaccount:argocd:argocd-application-controller"
CLUSTER = ClusterSpec(name="prod", argocd_namespace="argocd", has_kargo=True,
                      ingress_namespace="ingress-nginx")
TENANTS = [
    TenantSpec(slug="payments", name="Payments", groups={}, repo_url="",
               allowed_domains=("payments.example.com", "Pay.Example.ORG")),
    TenantSpec(slug="search", name="Search", groups={}, repo_url="",
               allowed_domains=("search.example.com",)),
    TenantSpec(slug="quiet", name="No domains", groups={}, repo_url=""),
]
BOOTSTRAP = bootstrap_objects(CLUSTER, TENANTS, berth_namespace="berth-system")
NAMESPACES = {
    "payments-shop-dev": {"berth.dev/tenant": "payments"},
    "search-web-dev": {"berth.dev/tenant": "search"},
    "quiet-app-dev": {"berth.dev/tenant": "quiet"},
    "newcomer-app-dev": {"berth.dev/tenant": "newcomer"},  # onboarded after the install
    "ingress-nginx": {},
}
BERTH_LABELS = {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": "payments"}


def admitted(operation, user, *, obj=None, old=None, objects=BOOTSTRAP, groups=()):
    request = admission_request(operation, user=user, groups=groups, obj=obj, old=old)
    return allowed_by_admission(request, objects, namespaces=NAMESPACES)


def network_policy(name="berth-default-deny", labels=BERTH_LABELS, ingress=None):
    spec = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    if ingress is not None:
        spec["ingress"] = ingress
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": "payments-shop-dev",
                         "labels": dict(labels)}, "spec": spec}


def ingress(*hosts, tls=(), namespace="payments-shop-dev", default_backend=False):
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    spec = {"rules": [{"host": host, "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": backend}]}} if host else
        {"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
        for host in hosts]}
    if not hosts:
        spec = {}
    if tls:
        spec["tls"] = [{"hosts": list(tls), "secretName": "web-tls"}]
    if default_backend:
        spec["defaultBackend"] = backend
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": namespace}, "spec": spec}


def certificate(*names, common_name=None):
    spec = {"secretName": "web-tls", "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
            "dnsNames": list(names)}
    if common_name:
        spec["commonName"] = common_name
    return {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": "web", "namespace": "payments-shop-dev"}, "spec": spec}


# --- Berth's objects are Berth's ------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "user", "obj", "old", "allowed"),
    [
        pytest.param("UPDATE", BERTH, network_policy(), network_policy(), True,
                     id="berth-updates-its-network-policy"),
        pytest.param("DELETE", BERTH, None, network_policy(), True,
                     id="berth-deletes-its-network-policy"),
        pytest.param("DELETE", DANA, None, network_policy(), False,
                     id="tenant-user-deletes-berth-network-policy"),
        pytest.param("UPDATE", DANA, network_policy(ingress=[{}]), network_policy(), False,
                     id="tenant-user-opens-berth-default-deny"),
        pytest.param("UPDATE", DANA, network_policy(labels={}), network_policy(), False,
                     id="tenant-user-removes-the-berth-label"),
        pytest.param("DELETE", DANA, None, network_policy("allow-web", labels={}), True,
                     id="tenant-user-deletes-own-unlabelled-network-policy"),
        pytest.param("CREATE", DANA, network_policy("allow-web", labels={}), None, True,
                     id="tenant-user-adds-a-network-policy"),
        pytest.param("CREATE", DANA, network_policy("fake", labels=BERTH_LABELS), None, False,
                     id="tenant-user-labels-a-new-object-as-berths"),
        pytest.param("UPDATE", DANA, network_policy("allow-web"),
                     network_policy("allow-web", labels={}), False,
                     id="tenant-user-relabels-own-object-as-berths"),
        pytest.param("DELETE", GITOPS, None, network_policy(), False,
                     id="gitops-service-account-deletes-berth-network-policy"),
        pytest.param("UPDATE", ARGOCD, network_policy(ingress=[{}]), network_policy(), False,
                     id="argocd-without-impersonation-overwrites-berth-network-policy"),
        pytest.param("DELETE", "system:serviceaccount:kube-system:namespace-controller", None,
                     network_policy(), True, id="namespace-controller-empties-a-deleted-namespace"),
    ],
)
def test_protect_policy(operation, user, obj, old, allowed):
    result = admitted(operation, user, obj=obj, old=old)
    assert result.allowed is allowed, result.reasons
    if not allowed:
        assert any("only Berth creates, changes or deletes it" in r for r in result.reasons)


def test_cluster_admins_are_refused_too():
    """Admission is not bypassed by system:masters (RBAC is): break glass by deleting the
    binding, never by editing Berth's objects in place."""
    role = next(o for o in BOOTSTRAP if o["kind"] == "ClusterRole")
    assert not admitted("DELETE", "kubernetes-admin", old=role, groups=["system:masters"]).allowed


def test_quota_is_protected_from_the_tenants_gitops_identity():
    quota = {"apiVersion": "v1", "kind": "ResourceQuota",
             "metadata": {"name": "berth-quota", "namespace": "payments-shop-dev",
                          "labels": BERTH_LABELS},
             "spec": {"hard": {"requests.cpu": "1"}}}
    raised = {**quota, "spec": {"hard": {"requests.cpu": "64"}}}
    assert not admitted("UPDATE", GITOPS, obj=raised, old=quota).allowed
    assert admitted("UPDATE", BERTH, obj=raised, old=quota).allowed


def test_kargo_adopts_its_project_namespace_only_where_kargo_runs():
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "payments-shop-kargo", "labels": BERTH_LABELS}}
    kargo = guardrails.KARGO_CONTROLLER
    assert admitted("UPDATE", kargo, obj=namespace, old=namespace).allowed
    without = bootstrap_objects(ClusterSpec(name="x", argocd_namespace="argocd", has_kargo=False,
                                            ingress_namespace="i"), TENANTS,
                                berth_namespace="berth-system")
    assert not admitted("UPDATE", kargo, obj=namespace, old=namespace, objects=without).allowed


def test_the_exempt_identity_follows_the_berth_namespace():
    objects = bootstrap_objects(CLUSTER, TENANTS, berth_namespace="platform")
    assert admitted("DELETE", "system:serviceaccount:platform:berth", old=network_policy(),
                    objects=objects).allowed
    assert not admitted("DELETE", BERTH, old=network_policy(), objects=objects).allowed


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
        pytest.param(ingress("shop.payments.example.com", "www.example.net"), False,
                     id="ingress-one-bad-rule"),
        pytest.param(ingress(None), False, id="ingress-rule-without-host"),
        pytest.param(ingress("shop.payments.example.com", tls=["shop.payments.example.com"]),
                     True, id="ingress-tls-inside"),
        pytest.param(ingress("shop.payments.example.com", tls=["bank.example.com"]), False,
                     id="ingress-tls-outside"),
        pytest.param(ingress(default_backend=True), False, id="ingress-catch-all-default-backend"),
        pytest.param(ingress("shop.search.example.com", namespace="search-web-dev"), True,
                     id="ingress-each-tenant-its-own-domains"),
        pytest.param(ingress("shop.payments.example.com", namespace="quiet-app-dev"), False,
                     id="ingress-tenant-without-domains"),
        pytest.param(ingress("newcomer.example.com", namespace="newcomer-app-dev"), False,
                     id="ingress-tenant-onboarded-after-install-fails-closed"),
        pytest.param(ingress("anything.example.com", namespace="ingress-nginx"), True,
                     id="ingress-platform-namespace-not-a-tenants"),
        pytest.param(certificate("shop.payments.example.com", "payments.example.com"), True,
                     id="certificate-inside"),
        pytest.param(certificate("shop.payments.example.com", "bank.example.com"), False,
                     id="certificate-one-bad-dns-name"),
        pytest.param(certificate("shop.payments.example.com", common_name="bank.example.com"),
                     False, id="certificate-bad-common-name"),
    ],
)
def test_domain_policies(obj, allowed):
    result = admitted("CREATE", DANA, obj=obj)
    assert result.allowed is allowed, result.reasons


def test_an_update_is_checked_like_a_create():
    good, bad = ingress("shop.payments.example.com"), ingress("bank.example.com")
    assert not admitted("UPDATE", DANA, obj=bad, old=good).allowed
    assert admitted("UPDATE", DANA, obj=good, old=bad).allowed


def test_a_missing_domain_list_refuses_instead_of_allowing():
    without = [o for o in BOOTSTRAP
               if o["metadata"]["name"] != "berth-domains-tenant-payments"]
    result = admitted("CREATE", DANA, obj=ingress("shop.payments.example.com"), objects=without)
    assert not result.allowed
    assert "berth-domains-tenant-payments does not exist" in result.reasons[0]


def test_domains_are_configmap_keys():
    (param,) = [o for o in BOOTSTRAP if o["metadata"]["name"] == "berth-domains-tenant-payments"]
    assert param["metadata"]["namespace"] == "berth-system"
    assert param["data"] == {"pay.example.org": "allowed", "payments.example.com": "allowed"}


# --- the policies themselves -------------------------------------------------------------


def policies():
    return [o for o in BOOTSTRAP if o["kind"] == "ValidatingAdmissionPolicy"]


def test_the_policy_objects_validate_against_the_kubernetes_schema():
    admission = [o for o in BOOTSTRAP if o["apiVersion"].startswith("admissionregistration")]
    assert {o["kind"] for o in admission} == {"ValidatingAdmissionPolicy",
                                              "ValidatingAdmissionPolicyBinding"}
    assert validate_objects(admission) == {}
    broken = {**policies()[0], "spec": {**policies()[0]["spec"], "validations": [{"expr": "x"}]}}
    assert [str(e) for e in validate_object(broken)] == [
        "spec.validations[0].expr: unknown field 'expr' (V1Validation)",
        "spec.validations[0].expression: required field is missing",
    ]


def expressions():
    for policy in policies():
        spec = policy["spec"]
        for item in [*spec.get("validations", []), *spec.get("matchConditions", []),
                     *spec.get("variables", [])]:
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
