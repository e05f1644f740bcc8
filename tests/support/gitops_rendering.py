"""What the pure tests of the GitOps renderer (test_gitops_plan_*.py, beside the GitOps
writer's tests) render from: a payments project's PlanInput on every tier, on a cluster with
Kargo, and the scope of the repository a rendering may touch."""

from __future__ import annotations

from provisioning import gitops_plan
from provisioning.plan import ClusterSpec, NamespaceSpec, PlanInput, TenantSpec, TierSpec

ENGINES = ("argocd", "argocd_kargo", "flux")
ROLES = {"owner": "edit", "member": "edit", "viewer": "view"}
TIERS = {
    "review": TierSpec(
        "review", "restricted", "ingress", 500, 512, 100, 128, ROLES, position=5, is_ephemeral=True
    ),
    "dev": TierSpec("dev", "baseline", "ingress", 500, 512, 100, 128, ROLES, position=10),
    "staging": TierSpec("staging", "restricted", "ingress", 500, 512, 100, 128, ROLES, position=20),
    "prod": TierSpec("prod", "restricted", "ingress", 500, 512, 100, 128, ROLES, position=30),
}


def inputs(
    engine="argocd_kargo",
    tiers=("dev", "staging", "prod"),
    *,
    project="shop",
    repo="https://git.example.com/payments/gitops.git",
    path="",
    request_id=12,
    has_kargo=True,
    argocd_namespace="argocd",
) -> PlanInput:
    return PlanInput(
        request_id=request_id,
        tenant=TenantSpec(
            "payments",
            "Payments team",
            {"member": ("payments-devs",)},
            repo,
            repo_branch="main",
            repo_path=path,
        ),
        cluster=ClusterSpec("sandbox", argocd_namespace, has_kargo, "ingress-nginx"),
        engine=engine,
        namespaces=tuple(
            NamespaceSpec(f"payments-shop-{tier}", TIERS[tier], 1000, 2048, 0, project)
            for tier in tiers
        ),
        project=project,
        app="shop",
    )


def scope(spec: PlanInput) -> tuple[str, ...]:
    return gitops_plan.scope(spec)
