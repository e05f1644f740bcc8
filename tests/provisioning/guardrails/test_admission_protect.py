"""Berth's ValidatingAdmissionPolicies, enforced by an API server (the stand-in) that holds
them: Berth's objects are Berth's. The protect policy refuses anyone else (a tenant's user,
its GitOps identity, Argo CD, even a cluster admin) who changes, relabels or deletes them;
Kargo may adopt its project namespace only where Kargo runs, and the exempt identity follows
the Berth namespace. Each case is the request itself, made as who it names."""

import pytest

from provisioning import guardrails
from provisioning.guardrails import bootstrap_objects
from provisioning.plan import ClusterSpec
from tests.support.guardrails_admission import (
    ARGOCD,
    BERTH,
    BERTH_LABELS,
    BOOTSTRAP,
    CLUSTER,
    DANA,
    GITOPS,
    NAMESPACE_CONTROLLER,
    admitted,
    kargo_namespace,
    live_cluster,
    network_policy,
    quota,
)


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
            NAMESPACE_CONTROLLER,
            None,
            network_policy(),
            True,
            id="namespace-controller-empties-a-deleted-namespace",
        ),
    ],
)
def test_protect_policy(cluster, operation, user, obj, old, allowed):
    admitted(cluster, operation, user, obj=obj, old=old).expect(
        allowed, "only Berth creates, changes or deletes it"
    )


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
