"""A tenant's fences name its namespaces exactly: its Argo CD AppProject's destinations
list each of them (updated with every namespace Berth makes or removes), its Flux reconciler
is bound in each of them, so a namespace the platform adds later under the tenant's prefix
is never the tenant's (docs/naming.md, "A tenant owns exactly its namespaces").

The plan-level tests read the AppProject as Argo CD reads its destinations (a glob, "!" to
deny). The loop tests provision through the GitOps loop's world (the stand-in with the
chart's RBAC, a git server over HTTP) and read the AppProject the stand-in holds.
"""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest
import requests

from provisioning import reconcile
from provisioning.plan import (
    ARGOCD,
    ClusterSpec,
    NamespaceSpec,
    Plan,
    PlanInput,
    TenantSpec,
    render,
)
from provisioning.tasks import install_guardrails
from tenants.choices import NamespaceState, RequestState
from tenants.models import Namespace
from tests.support.gitops_loop import (
    approved_namespace,
    ask_for_web,
    decide,
    provision_three_projects,
    submit,
    work,
)
from tests.support.gitops_roots import ARGO, live
from tests.support.plan_inputs import tier
from tests.support.workflow import approve_if_needed


def argocd_permits(project: dict[str, Any], namespace: str) -> bool:
    """Argo CD's rule for an Application's destination namespace: some destination's
    pattern matches it and no "!" one does (Argo CD >= 2.5)."""
    patterns = [d["namespace"] for d in project["spec"].get("destinations") or []]
    denied = any(fnmatch.fnmatchcase(namespace, p[1:]) for p in patterns if p.startswith("!"))
    allowed = any(fnmatch.fnmatchcase(namespace, p) for p in patterns if not p.startswith("!"))
    return allowed and not denied


def cert(*namespaces: str) -> TenantSpec:
    """Tenant `cert` (onboarded before its slug would be refused) with these namespaces."""
    return TenantSpec(
        "cert",
        "Cert team",
        {"owner": ("cert-owners",)},
        "https://git.example.com/cert.git",
        namespaces=namespaces,
    )


def cert_plan(**extra: Any) -> PlanInput:
    """Tenant `cert`, which has cert-api-dev, asking for cert-web-dev."""
    given: dict[str, Any] = {
        "tenant": cert("cert-api-dev"),
        "namespaces": (NamespaceSpec("cert-web-dev", tier(), 500, 512, 0),),
        "tenant_engines": frozenset({ARGOCD}),
    }
    return PlanInput(
        request_id=7,
        cluster=ClusterSpec("prod", "argocd", False, "ingress-nginx"),
        engine="argocd",
        **(given | extra),
    )


def appproject_of(inputs: PlanInput | Plan) -> dict[str, Any]:
    plan = inputs if isinstance(inputs, Plan) else render(inputs)
    (project,) = [o for o in plan.apply if o["kind"] == "AppProject"]
    return project


def test_cert_manager_installed_after_tenant_cert_is_not_among_its_destinations():
    project = appproject_of(cert_plan())
    assert [d["namespace"] for d in project["spec"]["destinations"]] == [
        "cert-api-dev",
        "cert-apps",
        "cert-web-dev",
    ]
    assert not argocd_permits(project, "cert-manager")
    assert not argocd_permits(project, "cert-gitops")  # the tenant's Flux home: never
    assert argocd_permits(project, "cert-web-dev") and argocd_permits(project, "cert-apps")


def test_a_namespace_removed_leaves_the_destinations_with_the_appproject_alone():
    """A decommission's plan (no roots applied) still carries the AppProject, without it."""
    leaving = cert_plan(
        namespaces=(), tenant_engines=frozenset(), remove_namespaces=("cert-api-dev",), refence=True
    )
    applied = render(leaving).apply
    assert [o["kind"] for o in applied] == ["AppProject"]
    assert not argocd_permits(applied[0], "cert-api-dev")


def test_what_an_approval_binds_is_unmoved_by_another_namespace_of_the_tenant():
    """Another request's namespace going live between approval and run changes the list,
    not what this request was approved for; its own namespace does."""
    before = render(cert_plan()).digest
    another = cert_plan(tenant=cert("cert-api-dev", "cert-api-staging"))
    assert render(another).digest == before
    assert argocd_permits(appproject_of(another), "cert-api-staging")
    other_own = cert_plan(namespaces=(NamespaceSpec("cert-web-prod", tier(), 500, 512, 0),))
    assert render(other_own).digest != before


# --- through the loop: what the cluster holds ---------------------------------------------


def live_destinations(sandbox) -> list[str]:
    project = live(sandbox, "AppProject", "payments", "argocd", api=ARGO)
    return [d["namespace"] for d in project["spec"]["destinations"]]


def can_i(sandbox, service_account: str, verb: str, resource: str, namespace: str) -> bool:
    """A SubjectAccessReview to the stand-in, as `kubectl auth can-i --as` asks it."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": f"system:serviceaccount:{service_account}",
            "groups": ["system:serviceaccounts", "system:authenticated"],
            "resourceAttributes": {
                "verb": verb,
                "group": "apps",
                "resource": resource,
                "namespace": namespace,
            },
        },
    }
    headers = {"Authorization": f"Bearer {sandbox.token}"} if sandbox.token else {}
    answer = requests.post(
        f"{sandbox.url}/apis/authorization.k8s.io/v1/subjectaccessreviews",
        json=review,
        headers=headers,
        timeout=30,
    )
    answer.raise_for_status()
    return bool(answer.json()["status"].get("allowed"))


def tenants_live_names() -> set[str]:
    return set(
        Namespace.objects.filter(tenant__slug="payments", state=NamespaceState.ACTIVE).values_list(
            "name", flat=True
        )
    )


@pytest.mark.crds
def test_a_platform_namespace_under_the_prefix_is_never_a_destination_and_the_list_follows(
    gitops_world, sandbox
):
    provision_three_projects(gitops_world)  # shop (Argo CD), cart (+ Kargo), feed (Flux)
    first = live_destinations(sandbox)
    assert first == sorted({*tenants_live_names(), "payments-apps", "payments-cart-kargo"})

    # The platform installs something under the tenant's prefix, outside Berth.
    sandbox.upsert(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "payments-audit"}}
    )

    web = ask_for_web(gitops_world)
    work()
    web.refresh_from_db()
    assert web.state == RequestState.READY, web.status_message
    project = live(sandbox, "AppProject", "payments", "argocd", api=ARGO)
    assert argocd_permits(project, "payments-web-dev")
    assert not argocd_permits(project, "payments-audit")
    assert live_destinations(sandbox) == sorted([*first, "payments-web-dev"])
    # Flux's fence is RBAC by name: the reconciler writes where it is bound, nowhere else
    # (the tiers' ClusterRoles installed as a platform admin's "Install guardrails" does).
    assert "applied" in install_guardrails(gitops_world["cluster"].pk)
    reconciler = "payments-gitops:berth-reconciler"
    assert can_i(sandbox, reconciler, "create", "deployments", "payments-feed-dev")
    assert not can_i(sandbox, reconciler, "create", "deployments", "payments-audit")

    # Decommissioned: the AppProject no longer names it.
    going = approve_if_needed(
        submit(gitops_world, "decommission", namespace="payments-web-dev", reason="done with it"),
        approver=gitops_world["admin"],
    )
    work()
    going.refresh_from_db()
    assert going.state == RequestState.READY, going.status_message
    assert live_destinations(sandbox) == first


@pytest.mark.crds
def test_a_namespace_removed_between_approval_and_run_does_not_send_the_approval_back(
    gitops_world, sandbox
):
    """The seam of exact destinations and digest-bound approval: the plan approved listed
    payments-shop-dev in the AppProject; shop-dev is decommissioned before it runs; it runs
    as approved (its own namespace is what was approved), and the AppProject it applies
    names what is there now."""
    approved_namespace(gitops_world, "shop", "dev")
    work()
    web = submit(
        gitops_world,
        "namespace",
        app="web",
        tier="prod",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    if web.state == RequestState.SUBMITTED:
        decide(gitops_world, web)  # a platform admin approves the plan as shown now
    web.refresh_from_db()
    assert web.state == RequestState.APPROVED
    assert "payments-shop-dev" in {
        d["namespace"] for d in appproject_of(reconcile.current_plan(web))["spec"]["destinations"]
    }

    going = approve_if_needed(
        submit(gitops_world, "decommission", namespace="payments-shop-dev", reason="gone"),
        approver=gitops_world["admin"],
    )
    reconcile.converge(request_id=going.pk, worker="loop-test")  # runs alone: not batched
    going.refresh_from_db()
    assert going.state == RequestState.READY, going.status_message

    work()
    web.refresh_from_db()
    assert web.state == RequestState.READY, web.status_message
    assert "payments-web-prod" in live_destinations(sandbox)
    assert "payments-shop-dev" not in live_destinations(sandbox)
