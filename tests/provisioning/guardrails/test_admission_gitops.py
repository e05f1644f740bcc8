"""Berth's ValidatingAdmissionPolicies, enforced by an API server (the stand-in) that holds
them: the GitOps side. The tenant's roots (its Argo CD Application and Flux Kustomization)
change only by Berth's hand, and Flux acting as the tenant reconciles only as the tenant's
reconciler, from the tenant's own repository."""

import pytest

from tests.support.guardrails_admission import (
    ARGOCD,
    BERTH,
    DANA,
    FLUX,
    NAMESPACE_CONTROLLER,
    RECONCILER,
    REPOSITORY,
    admitted,
    git_repository,
    kustomization,
    root_application,
    root_kustomization,
)

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
            NAMESPACE_CONTROLLER,
            None,
            root_kustomization(),
            True,
            id="namespace-controller-empties-the-namespace",
        ),
    ],
)
def test_roots_policy(cluster, operation, user, obj, old, allowed):
    admitted(cluster, operation, user, obj=obj, old=old).expect(
        allowed, "one of the tenant's roots"
    )


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
    admitted(cluster, "CREATE", RECONCILER, obj=obj).expect(allowed, why)
