"""What the pure tests of the plan (tests/provisioning/plan/) render from: a tier, the
payments tenant with its repository and token, the sandbox cluster with Kargo, a PlanInput for
one namespace of theirs, and finding objects of a kind in a rendered plan."""

from __future__ import annotations

from provisioning import plan
from provisioning.plan import (
    ARGOCD,
    FLUX,
    ClusterSpec,
    NamespaceSpec,
    PlanInput,
    RepoCredential,
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
