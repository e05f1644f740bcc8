"""``namespaceObject`` and ``namespaceSelector`` in ValidatingAdmissionPolicies, as Berth's
least-privilege policies use them and kube-apiserver hands them."""

from __future__ import annotations

from kubesandbox import KubeSandbox

from .admission_support import enforce
from .conftest import raw


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
    enforce(sandbox, describe_namespace_policy(["configmaps", "namespaces"], [""]), ["Deny"])

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
    enforce(
        sandbox,
        describe_namespace_policy(
            ["configmaps", "namespaces", "clusterroles"], ["", "rbac.authorization.k8s.io"]
        ),
        ["Deny"],
        matchResources={
            "namespaceSelector": {
                "matchExpressions": [{"key": "owner", "operator": "NotIn", "values": ["payments"]}]
            }
        },
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
