"""What a run removes starts and ends the decommission of the requests that made it: the
requests that created the namespaces, and an ending environment's own request."""

from __future__ import annotations

from provisioning.inputs.kinds import plan_kind_for
from provisioning.reconcile.batches import Item
from provisioning.records import outcomes
from tenants import services
from tenants.choices import RequestState
from tenants.models import Namespace, Request


def start_removals(items: list[Item]) -> None:
    """What the items remove starts its own decommission: the requests that made the
    namespaces, and an ending environment's own request."""
    for item in items:
        tenancy_request = item.request
        reason = tenancy_request.payload.get("reason", "")
        if item.plan.delete:
            for creator in outcomes.mark_namespaces_decommissioning(
                tenancy_request=tenancy_request, inputs=item.inputs
            ):
                start_decommission_of(creator, reason=reason)
        ending = outcomes.environment_ended_by(tenancy_request)
        if ending is not None:
            # The environment's own request follows it, whether or not its namespace goes.
            cause = tenancy_request.payload.get("cause", "")
            start_decommission_of(
                ending.request_id, reason=reason or f"Environment {ending.slug} ended ({cause})."
            )


def start_decommission_of(request_id: int, *, reason: str) -> None:
    creator = Request.objects.get(pk=request_id)
    # Only a request that made exactly this one namespace (or environment) follows it.
    if plan_kind_for(creator.kind).follows_its_namespace and creator.state == RequestState.READY:
        services.start_decommission(request_id=request_id, actor=None, reason=reason)


def creators_of(names: tuple[str, ...], tenancy_request: Request) -> list[int]:
    return list(
        Namespace.objects.filter(tenant=tenancy_request.tenant, name__in=names)
        .exclude(request=None)
        .values_list("request_id", flat=True)
    )


def finish_decommission_of(request_id: int) -> None:
    if Request.objects.filter(pk=request_id, state=RequestState.DECOMMISSIONING).exists():
        services.mark_decommissioned(request_id=request_id)
