"""What the pure tests of the plan (tests/provisioning/plan/) render from: a tier, the
payments tenant with its repository and token, the sandbox cluster with Kargo, a PlanInput for
one namespace of theirs, and finding objects of a kind in a rendered plan. And a PlanInput
holding every kind Berth applies or deletes, for the tests that check a rendering against what
Berth may do (tests/project/test_helm_chart_rbac_needs.py,
tests/security/test_chart_least_privilege_*.py)."""

from __future__ import annotations

from provisioning import plan
from provisioning.plan import (
    ARGOCD,
    FLUX,
    ClusterSpec,
    KargoProject,
    NamespaceSpec,
    PlanInput,
    RepoCredential,
    SleepSpec,
    TenantSpec,
    TierSpec,
)


def tier(
    slug: str = "dev", *, network: str = "ingress", member_role: str = plan.TENANT_EDIT_ROLE
) -> TierSpec:
    return TierSpec(
        slug=slug,
        pod_security_level="restricted",
        network_preset=network,
        container_default_cpu_millis=500,
        container_default_memory_mib=512,
        container_request_cpu_millis=100,
        container_request_memory_mib=128,
        cluster_roles={
            "owner": plan.TENANT_EDIT_ROLE,
            "member": member_role,
            "viewer": plan.TENANT_VIEW_ROLE,
        },
    )


def namespace_spec(
    name: str, spec_tier: TierSpec | None = None, *, storage_gib: int = 0, **extra
) -> NamespaceSpec:
    """A namespace of 1 CPU and 1Gi of memory, on the dev tier unless told."""
    return NamespaceSpec(
        name=name,
        tier=spec_tier or tier(),
        cpu_millis=1000,
        memory_mib=1024,
        storage_gib=storage_gib,
        **extra,
    )


TOKEN = "glpat-very-secret-token"
TENANT = TenantSpec(
    slug="payments",
    name="Payments team",
    groups={"owner": ("payments-owners",), "member": ("payments-devs",), "viewer": ()},
    repo_url="https://git.example.com/payments/deploy.git",
    credential=RepoCredential(transport="https", username="x-access-token", password=TOKEN),
)
CLUSTER = ClusterSpec(
    name="sandbox", argocd_namespace="argocd", has_kargo=True, ingress_namespace="ingress-nginx"
)

# The payments tenant's roots of both engines, as a plan deletes them: after everything else.
TENANT_ROOTS_DELETED = (
    "Application/payments-apps/berth-root",
    "Secret/argocd/berth-repo-payments",
    "AppProject/argocd/payments",
    "Namespace/payments-apps",
    "Kustomization/payments-gitops/berth-root",
    "Namespace/payments-gitops",
)


def inputs(*, engine: str = "argocd", namespaces=None, project: str = "", **extra) -> PlanInput:
    namespaces = namespaces or (
        NamespaceSpec(
            name="payments-shop-dev", tier=tier(), cpu_millis=1500, memory_mib=3072, storage_gib=5
        ),
    )
    extra.setdefault("tenant_engines", frozenset({FLUX if engine == "flux" else ARGOCD}))
    return PlanInput(
        request_id=42,
        tenant=extra.pop("tenant", TENANT),
        cluster=extra.pop("cluster", CLUSTER),
        engine=engine,
        namespaces=tuple(namespaces),
        project=project,
        **extra,
    )


def find(result: plan.Plan, kind: str, name: str | None = None) -> list[dict]:
    return [
        o
        for o in result.apply
        if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]


def a_plan_input_with_every_kind() -> PlanInput:
    """A project on Argo CD + Kargo, the tenant's objects of both engines (Argo CD
    impersonating), and everything a tenant leaving the cluster deletes: every kind Berth
    applies or deletes."""
    dev = tier()
    return PlanInput(
        request_id=1,
        tenant=TenantSpec(
            slug="payments",
            name="Payments",
            groups={"owner": ("po",), "member": ("pm",), "viewer": ("pv",)},
            repo_url="https://git.example.com/payments.git",
            credential=RepoCredential(transport="https", username="bot", password="t0ken"),
        ),
        cluster=ClusterSpec(
            name="prod",
            argocd_namespace="argocd",
            has_kargo=True,
            ingress_namespace="ingress",
            argocd_impersonation=True,
        ),
        engine="argocd_kargo",
        namespaces=(
            NamespaceSpec("payments-shop-dev", dev, 1000, 1024, 5, project="shop"),
            NamespaceSpec(
                "payments-web-dev",
                dev,
                1000,
                1024,
                5,
                project="web",
                engine="flux",
                sleep=SleepSpec(
                    "1-5", "20:00", "08:00", "Europe/Rome", kube_green=True, asleep=False
                ),
            ),
        ),
        project="shop",
        remove_namespaces=("payments-old-dev",),
        tenant_engines=frozenset({ARGOCD, FLUX}),
        kargo_projects=(KargoProject("shop", "payments-shop-kargo", (dev,)),),
        remove_kargo=(KargoProject("old", "payments-old-kargo"),),
        remove_tenant_engines=frozenset({ARGOCD, FLUX}),
    )
