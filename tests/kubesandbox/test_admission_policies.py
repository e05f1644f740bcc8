"""ValidatingAdmissionPolicies are enforced, in CEL, as kube-apiserver enforces them:
denials, warnings, match conditions, params, ``oldObject`` and the ``authorizer`` variable.
Berth's own guardrail policies are in ``test_admission_guardrails``, ``namespaceObject`` and
``namespaceSelector`` in ``test_admission_namespaces``."""

from __future__ import annotations

import pytest

from kubesandbox import KubeSandbox

from .admission_support import ADMISSION, as_user, bind, cluster_role_binding, enforce
from .conftest import raw


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


def let_ops_and_devs_edit(sandbox: KubeSandbox) -> None:
    for group in ("ops", "devs"):
        sandbox.upsert(cluster_role_binding(f"{group}-edit", "edit", "Group", group))


@pytest.fixture
def policy(sandbox: KubeSandbox, team: str) -> None:
    assert (
        raw(sandbox, "POST", f"{ADMISSION}/validatingadmissionpolicies", replicas_policy())[0]
        == 201
    )


def test_a_denying_policy_refuses_with_its_message(
    sandbox: KubeSandbox, team: str, policy: None
) -> None:
    bind(sandbox, "max-replicas", ["Deny"])
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

    bind(sandbox, "max-replicas", ["Warn"])
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
    enforce(sandbox, policy, ["Deny"])
    let_ops_and_devs_edit(sandbox)
    path = f"/apis/apps/v1/namespaces/{team}/deployments"

    def checked_one_as(user: str, group: str) -> int:
        labelled = deployment(group, 9, {"checked": "yes"})
        return raw(sandbox, "POST", path, labelled, headers=as_user(user, group))[0]

    assert raw(sandbox, "POST", path, deployment("unlabelled", 9))[0] == 201
    assert checked_one_as("olga", "ops") == 201
    assert checked_one_as("dave", "devs") == 422


def test_a_missing_param_with_deny_action_refuses(sandbox: KubeSandbox, team: str) -> None:
    policy = replicas_policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    policy["spec"]["validations"] = [
        {"expression": "object.spec.replicas <= int(params.data.max)", "reason": "Forbidden"}
    ]
    enforce(
        sandbox,
        policy,
        ["Deny"],
        paramRef={"name": "limits", "namespace": team, "parameterNotFoundAction": "Deny"},
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
    enforce(
        sandbox,
        policy,
        ["Deny"],
        matchResources={"objectSelector": {"matchLabels": {"checked": "yes"}}},
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
    enforce(sandbox, policy, ["Deny"])
    let_ops_and_devs_edit(sandbox)
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
