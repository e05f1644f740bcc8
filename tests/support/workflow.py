"""Taking requests through the workflow in tests, the way people and policy would."""

from provisioning import reconcile
from tenants import services
from tenants.choices import RequestState
from tenants.models import Request
from tenants.selectors import review


def approve_if_needed(tenancy_request: Request, *, approver) -> Request:
    """Approve as `approver` unless the policy already approved it automatically."""
    if tenancy_request.state != RequestState.SUBMITTED:
        return tenancy_request
    return services.approve_request(
        request_id=tenancy_request.pk,
        approver=approver,
        plan_digest=review(tenancy_request).digest,
    )


def ask_for_namespace(
    tenant, requester, *, app: str, tier="dev", cpu="500m", memory="512Mi", **more
) -> Request:
    """A namespace request on the sandbox cluster, as `requester` submits it."""
    return services.submit_request(
        tenant=tenant,
        kind="namespace",
        requester=requester,
        payload={"app": app, "tier": tier, "cluster": "sandbox", "cpu": cpu, "memory": memory}
        | more,
    )


def ask_for_project(
    tenant, requester, *, app: str, engine="argocd_kargo", tiers=("dev", "staging", "prod")
) -> Request:
    """A project request on the sandbox cluster, one namespace a tier."""
    return services.submit_request(
        tenant=tenant,
        kind="project",
        requester=requester,
        payload={"app": app, "engine": engine, "cluster": "sandbox", "tiers": list(tiers)},
    )


def ask_for_environment(tenant, requester, *, project: str, env_slug: str, **more) -> Request:
    """An ephemeral environment request of `project`, as `requester` (CI, say) submits it."""
    return services.submit_request(
        tenant=tenant,
        kind="ephemeral",
        requester=requester,
        payload={"project": project, "env_slug": env_slug} | more,
    )


# The request most tests of provisioning ask for: one dev namespace of app shop.
SHOP = {"app": "shop", "tier": "dev", "cluster": "sandbox", "cpu": "1", "memory": "2Gi"}
WORKER = "test-worker"


def approved(world, kind: str = "namespace", **payload) -> Request:
    """Submitted by the world's developer and approved by its admin (or by policy)."""
    submitted = services.submit_request(
        tenant=world["tenant"], kind=kind, payload=payload or SHOP, requester=world["developer"]
    )
    return approve_if_needed(submitted, approver=world["admin"])


def converge(tenancy_request: Request) -> Request:
    """One worker's converge of the request, as the request is after it."""
    reconcile.converge(request_id=tenancy_request.pk, worker=WORKER)
    tenancy_request.refresh_from_db()
    return tenancy_request
