"""ValidatingAdmissionPolicies are enforced, in CEL, as kube-apiserver enforces them; Berth's
own guardrail policies (provisioning.guardrails) work unchanged."""

from __future__ import annotations

import pytest

from kubesandbox import KubeSandbox

from .conftest import raw

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
BERTH = "system:serviceaccount:berth-system:berth"


def as_user(user: str, *groups: str) -> dict[str, str]:
    """Impersonation headers (the sandbox's anonymous user is the admin here)."""
    headers = {"Impersonate-User": user}
    if groups:
        headers["Impersonate-Group"] = ", ".join(groups)
    return headers


def deployment(name: str, replicas: int, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def replicas_policy(**spec: object) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "max-replicas"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["deployments"],
                    }
                ]
            },
            "variables": [{"name": "wanted", "expression": "object.spec.replicas"}],
            "validations": [
                {
                    "expression": "variables.wanted <= 5",
                    "messageExpression": "'at most 5 replicas, not ' + string(variables.wanted)",
                }
            ],
            **spec,
        },
    }


def cluster_role_binding(name: str, role: str, kind: str, subject: str) -> dict:
    subject_entry = {"kind": kind, "name": subject}
    if kind == "ServiceAccount":
        subject_entry["name"], subject_entry["namespace"] = (
            subject.split(":")[-1],
            (subject.split(":")[-2]),
        )
    else:
        subject_entry["apiGroup"] = "rbac.authorization.k8s.io"
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [subject_entry],
    }


def binding(policy: str, actions: list[str], **spec: object) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{policy}-binding"},
        "spec": {"policyName": policy, "validationActions": actions, **spec},
    }


@pytest.fixture
def policy(sandbox: KubeSandbox, team: str) -> None:
    assert (
        raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", replicas_policy())[0]
        == 201
    )


def test_a_denying_policy_refuses_with_its_message(
    sandbox: KubeSandbox, team: str, policy: None
) -> None:
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding("max-replicas", ["Deny"]),
    )
    path = f"/apis/apps/v1/namespaces/{team}/deployments"
    assert raw(sandbox, "POST", path, deployment("small", 3))[0] == 201
    status, body = raw(sandbox, "POST", path, deployment("big", 9))
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        "ValidatingAdmissionPolicy 'max-replicas' with binding "
        "'max-replicas-binding' denied request: at most 5 replicas, "
        "not 9"
    )
    assert sandbox.get("Deployment", "big", team) is None


def test_a_policy_without_a_binding_does_nothing(
    sandbox: KubeSandbox, team: str, policy: None
) -> None:
    status, _ = raw(
        sandbox, "POST", f"/apis/apps/v1/namespaces/{team}/deployments", deployment("big", 9)
    )
    assert status == 201


def test_a_warning_binding_admits_with_a_warning_header(
    sandbox: KubeSandbox, team: str, policy: None
) -> None:
    import urllib3

    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding("max-replicas", ["Warn"]),
    )
    import json

    response = urllib3.request(
        "POST",
        f"{sandbox.url}/apis/apps/v1/namespaces/{team}/deployments",
        body=json.dumps(deployment("big", 9)),
        headers={"Content-Type": "application/json"},
    )
    assert response.status == 201
    assert response.headers["Warning"] == (
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding "
        "'max-replicas-binding': at most 5 replicas, not 9\""
    )


def test_match_conditions_object_selectors_and_request_user(
    sandbox: KubeSandbox, team: str
) -> None:
    policy = replicas_policy(
        matchConditions=[{"name": "not-ops", "expression": "!('ops' in request.userInfo.groups)"}],
    )
    policy["spec"]["matchConstraints"]["objectSelector"] = {"matchLabels": {"checked": "yes"}}
    raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding("max-replicas", ["Deny"]),
    )
    for group in ("ops", "devs"):
        sandbox.upsert(cluster_role_binding(f"{group}-edit", "edit", "Group", group))
    path = f"/apis/apps/v1/namespaces/{team}/deployments"
    assert raw(sandbox, "POST", path, deployment("unlabelled", 9))[0] == 201
    assert (
        raw(
            sandbox,
            "POST",
            path,
            deployment("ops", 9, {"checked": "yes"}),
            headers=as_user("olga", "ops"),
        )[0]
        == 201
    )
    assert (
        raw(
            sandbox,
            "POST",
            path,
            deployment("dev", 9, {"checked": "yes"}),
            headers=as_user("dave", "devs"),
        )[0]
        == 422
    )


def test_a_missing_param_with_deny_action_refuses(sandbox: KubeSandbox, team: str) -> None:
    policy = replicas_policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    policy["spec"]["validations"] = [
        {"expression": "object.spec.replicas <= int(params.data.max)", "reason": "Forbidden"}
    ]
    raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding(
            "max-replicas",
            ["Deny"],
            paramRef={"name": "limits", "namespace": team, "parameterNotFoundAction": "Deny"},
        ),
    )
    path = f"/apis/apps/v1/namespaces/{team}/deployments"
    status, body = raw(sandbox, "POST", path, deployment("web", 2))
    assert status == 403
    assert "no params found for policy binding" in body["message"]
    raw(
        sandbox,
        "POST",
        f"/api/v1/namespaces/{team}/configmaps",
        {"metadata": {"name": "limits"}, "data": {"max": "3"}},
    )
    assert raw(sandbox, "POST", path, deployment("web", 2))[0] == 201
    status, body = raw(sandbox, "POST", path, deployment("big", 4))
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"].endswith(
        "denied request: failed expression: object.spec.replicas <= int(params.data.max)"
    )


def test_object_and_old_object_compare_with_null_on_every_operation(
    sandbox: KubeSandbox, team: str
) -> None:
    """As kube-apiserver (cel-go compares any value with null): oldObject is null on
    CREATE, object on DELETE, and `!= null` says so whichever side null is on."""
    policy = replicas_policy()
    policy["spec"]["matchConstraints"]["resourceRules"][0]["operations"] = [
        "CREATE",
        "UPDATE",
        "DELETE",
    ]
    policy["spec"]["variables"] = []
    policy["spec"]["validations"] = [
        {
            "expression": "false",
            "messageExpression": "request.operation + ': object ' + "
            "(object != null ? 'set' : 'null') + ', oldObject ' + "
            "(null != oldObject ? 'set' : 'null')",
        }
    ]
    raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding(
            "max-replicas",
            ["Deny"],
            matchResources={"objectSelector": {"matchLabels": {"checked": "yes"}}},
        ),
    )
    path = f"/apis/apps/v1/namespaces/{team}/deployments"
    sandbox.upsert(
        {
            **deployment("web", 1, {"checked": "yes"}),
            "metadata": {"name": "web", "namespace": team, "labels": {"checked": "yes"}},
        }
    )

    answers = [
        raw(sandbox, "POST", path, deployment("new", 1, {"checked": "yes"}))[1],
        raw(sandbox, "PUT", f"{path}/web", deployment("web", 2, {"checked": "yes"}))[1],
        raw(sandbox, "DELETE", f"{path}/web")[1],
    ]

    assert [answer["message"].partition("denied request: ")[2] for answer in answers] == [
        "CREATE: object set, oldObject null",
        "UPDATE: object set, oldObject set",
        "DELETE: object null, oldObject set",
    ]


# -- Berth's own guardrails ------------------------------------------------------------------


@pytest.fixture
def guardrails(sandbox: KubeSandbox) -> None:
    from provisioning.guardrails import bootstrap_objects
    from provisioning.plan import DOMAINS_CONFIG, ClusterSpec

    cluster = ClusterSpec(
        name="prod", argocd_namespace="argocd", has_kargo=False, ingress_namespace="ingress-nginx"
    )
    for obj in bootstrap_objects(cluster, berth_namespace="berth-system"):
        sandbox.upsert(obj)
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "payments-shop-dev", "labels": {"berth.dev/tenant": "payments"}},
        }
    )
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",  # as the namespace's bundle has it
            "metadata": {
                "name": DOMAINS_CONFIG,
                "namespace": "payments-shop-dev",
                "labels": {"app.kubernetes.io/managed-by": "berth"},
            },
            "data": {"payments.example.com": "allowed"},
        }
    )
    sandbox.upsert(cluster_role_binding("berth", "cluster-admin", "ServiceAccount", BERTH))
    sandbox.upsert(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "dana-edit", "namespace": "payments-shop-dev"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "edit",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "dana"}],
        }
    )


def ingress(name: str, host: str) -> dict:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name},
        "spec": {
            "rules": [
                {
                    "host": host,
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
                }
            ]
        },
    }


def test_berths_ingress_domain_policy_admits_the_tenants_hosts_only(
    sandbox: KubeSandbox, guardrails: None
) -> None:
    path = "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/ingresses"
    dana = as_user("dana")
    assert (
        raw(sandbox, "POST", path, ingress("shop", "shop.payments.example.com"), headers=dana)[0]
        == 201
    )
    status, body = raw(sandbox, "POST", path, ingress("evil", "www.example.org"), headers=dana)
    assert status == 403
    assert body["message"].startswith(
        "ValidatingAdmissionPolicy 'berth-ingress-domains' with binding "
        "'berth-ingress-domains' denied request: Every Ingress rule must name a "
        "host in the tenant's allowed domains"
    )


def test_berths_objects_are_changed_by_berth_only(sandbox: KubeSandbox, guardrails: None) -> None:
    path = "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/networkpolicies"
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "berth-default-deny",
            "labels": {"app.kubernetes.io/managed-by": "berth"},
        },
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }
    status, body = raw(sandbox, "POST", path, policy, headers=as_user("dana"))
    assert (status, body["reason"]) == (403, "Forbidden")
    assert "This object is Berth's" in body["message"]
    assert raw(sandbox, "POST", path, policy, headers=as_user(BERTH))[0] == 201
    status, _ = raw(sandbox, "DELETE", f"{path}/berth-default-deny", headers=as_user("dana"))
    assert status == 403
    assert raw(sandbox, "DELETE", f"{path}/berth-default-deny", headers=as_user(BERTH))[0] == 200


def test_the_authorizer_variable_asks_rbac(sandbox: KubeSandbox, team: str) -> None:
    policy = replicas_policy()
    policy["spec"]["validations"] = [
        {
            "expression": "object.spec.replicas <= 5 || authorizer.group('apps')"
            ".resource('deployments').namespace(request.namespace).name('big')"
            ".check('scale-big').allowed()",
            "message": "only those allowed to scale-big may run more than 5 replicas",
            "reason": "Forbidden",
        }
    ]
    raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding("max-replicas", ["Deny"]),
    )
    for group in ("ops", "devs"):
        sandbox.upsert(cluster_role_binding(f"{group}-edit", "edit", "Group", group))
    sandbox.upsert(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "scaler"},
            "rules": [
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["scale-big"]}
            ],
        }
    )
    sandbox.upsert(cluster_role_binding("ops-scaler", "scaler", "Group", "ops"))
    path = f"/apis/apps/v1/namespaces/{team}/deployments"
    status, body = raw(sandbox, "POST", path, deployment("big", 9), headers=as_user("d", "devs"))
    assert (status, body["reason"]) == (403, "Forbidden")
    assert raw(sandbox, "POST", path, deployment("big", 9), headers=as_user("o", "ops"))[0] == 201


# -- namespaceObject and namespaceSelector, as Berth's least-privilege policies use them -----


def describe_namespace_policy(resources: list[str], groups: list[str]) -> dict:
    """A policy refusing everything, saying what it was given as `namespaceObject`."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "where"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": groups,
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "resources": resources,
                    }
                ]
            },
            "validations": [
                {
                    "expression": "false",
                    "messageExpression": "request.operation + ' ' + request.resource.resource + "
                    "': ' + "
                    "(namespaceObject == null ? 'null' : namespaceObject.metadata.name + "
                    "' owner=' + namespaceObject.metadata.labels['owner'] + "
                    "' managedFields=' + string(has(namespaceObject.metadata.managedFields)) + "
                    "' phase=' + namespaceObject.status.phase)",
                }
            ],
        },
    }


def refusal(answer: tuple[int, dict]) -> str:
    status, body = answer
    assert status == 422, body
    return body["message"].partition("denied request: ")[2]


def test_namespace_object_is_the_objects_namespace_as_kube_apiserver_hands_it(
    sandbox: KubeSandbox,
) -> None:
    """The namespace's labels on every operation; its managedFields left out (as
    kube-apiserver's CreateNamespaceObject does); null for a cluster-scoped kind."""
    status, made = raw(
        sandbox,
        "POST",
        "/api/v1/namespaces",
        {"metadata": {"name": "shop", "labels": {"owner": "payments"}}},
    )
    assert status == 201 and made["metadata"]["managedFields"]
    configmaps = "/api/v1/namespaces/shop/configmaps"
    assert raw(sandbox, "POST", configmaps, {"metadata": {"name": "kept"}})[0] == 201
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicies",
        describe_namespace_policy(["configmaps", "namespaces"], [""]),
    )
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding("where", ["Deny"]),
    )

    answers = [
        raw(sandbox, "POST", configmaps, {"metadata": {"name": "new"}}),
        raw(
            sandbox, "PUT", f"{configmaps}/kept", {"metadata": {"name": "kept"}, "data": {"a": "b"}}
        ),
        raw(sandbox, "DELETE", f"{configmaps}/kept"),
        raw(sandbox, "DELETE", "/api/v1/namespaces/shop"),
    ]

    assert [refusal(answer) for answer in answers] == [
        "CREATE configmaps: shop owner=payments managedFields=false phase=Active",
        "UPDATE configmaps: shop owner=payments managedFields=false phase=Active",
        "DELETE configmaps: shop owner=payments managedFields=false phase=Active",
        "DELETE namespaces: null",
    ]


def test_a_namespace_selector_never_skips_a_cluster_scoped_kind(sandbox: KubeSandbox) -> None:
    """namespaceSelector: a namespaced object by its namespace's labels (NotIn selects one
    without the label too), a Namespace by its own, any other cluster-scoped object always."""
    for name, labels in (
        ("mine", {"owner": "payments"}),
        ("theirs", {"owner": "ops"}),
        ("unlabelled", {}),
    ):
        assert (
            raw(
                sandbox,
                "POST",
                "/api/v1/namespaces",
                {"metadata": {"name": name, "labels": labels}},
            )[0]
            == 201
        )
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicies",
        describe_namespace_policy(
            ["configmaps", "namespaces", "clusterroles"], ["", "rbac.authorization.k8s.io"]
        ),
    )
    raw(
        sandbox,
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        binding(
            "where",
            ["Deny"],
            matchResources={
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": "owner", "operator": "NotIn", "values": ["payments"]}
                    ]
                }
            },
        ),
    )

    assert (
        raw(sandbox, "POST", "/api/v1/namespaces/mine/configmaps", {"metadata": {"name": "c"}})[0]
        == 201
    )
    assert refusal(
        raw(sandbox, "POST", "/api/v1/namespaces/theirs/configmaps", {"metadata": {"name": "c"}})
    ).startswith("CREATE configmaps: theirs")
    assert (
        raw(
            sandbox, "POST", "/api/v1/namespaces/unlabelled/configmaps", {"metadata": {"name": "c"}}
        )[0]
        == 422
    )
    assert (
        raw(
            sandbox,
            "PUT",
            "/api/v1/namespaces/mine",
            {"metadata": {"name": "mine", "labels": {"owner": "payments", "x": "y"}}},
        )[0]
        == 200
    )
    assert refusal(raw(sandbox, "DELETE", "/api/v1/namespaces/theirs")) == (
        "DELETE namespaces: null"
    )
    assert refusal(
        raw(
            sandbox,
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {"metadata": {"name": "r"}, "rules": []},
        )
    ) == ("CREATE clusterroles: null")
