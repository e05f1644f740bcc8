"""A tenant's plan on the sandbox cluster, for the guardrails' tests: the payments tenant, its
dev tier bound to Berth's roles, the plan `inputs` of its project `shop`, the cluster
bootstrap, the AppProject the plan renders, and a team's own workload."""

from dataclasses import replace

from provisioning.guardrails import bootstrap_objects
from provisioning.plan import (
    ARGOCD,
    FLUX,
    GITOPS_SERVICE_ACCOUNT,
    KargoProject,
    NamespaceSpec,
    PlanInput,
    RepoCredential,
    TenantSpec,
    TierSpec,
    render,
)
from tests.support import plan_inputs
from tests.support.authz import Subject

CLUSTER = plan_inputs.CLUSTER
TENANT = TenantSpec(
    slug="payments",
    name="Payments",
    groups={"owner": ("payments-owners",), "member": ("payments-devs",), "viewer": ()},
    repo_url="https://git.example.com/payments.git",
    allowed_domains=("payments.example.com",),
    credential=RepoCredential(transport="https", username="bot", password="s3cr3t-token"),
)
TIER = plan_inputs.tier()


def inputs(engine: str = "argocd_kargo", tier: TierSpec = TIER, **cluster) -> PlanInput:
    """A project's plan with everything of the tenant's on the cluster: its roots and
    credentials, and (on Argo CD + Kargo) the Kargo side."""
    kargo = (KargoProject("shop", "payments-shop-kargo", (tier,)),)
    return PlanInput(
        request_id=7,
        tenant=TENANT,
        cluster=replace(CLUSTER, **cluster),
        engine=engine,
        project="shop",
        namespaces=(NamespaceSpec("payments-shop-dev", tier, 1000, 1024, 1, project="shop"),),
        tenant_engines=frozenset({FLUX if engine == "flux" else ARGOCD}),
        kargo_projects=kargo if engine == "argocd_kargo" else (),
    )


BOOTSTRAP = bootstrap_objects(CLUSTER, berth_namespace="berth-system")
NAMESPACE = "payments-shop-dev"
GITOPS = Subject.service_account(NAMESPACE, GITOPS_SERVICE_ACCOUNT)


def project() -> dict:
    """The tenant's AppProject, as its plan renders it."""
    (appproject,) = [o for o in render(inputs()).apply if o["kind"] == "AppProject"]
    return appproject


def web_deployment(namespace: str) -> dict:
    """A team's own workload: nginx in a Deployment named web."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }
