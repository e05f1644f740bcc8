"""The engine's side of each request kind, one module each, keyed by the values of
`tenants.choices.RequestKind` like the domain's registry (`tenants.kinds`, which says why
the two sides are two packages): what a request of the kind brings to its plan input and
which GitOps files it changes."""

from __future__ import annotations

from collections.abc import Iterator

from provisioning.inputs.kinds import (
    access,
    decommission,
    end_environment,
    environment,
    ephemeral,
    namespace,
    project,
    project_decommission,
    quota_change,
    sleep,
    tenant_decommission,
    tenant_sync,
)
from provisioning.inputs.kinds.base import Draft, PlanKind
from tenants.registry import Registry

__all__ = ["Draft", "PlanKind", "all_plan_kinds", "plan_kind_for", "plan_kinds_where"]

KINDS: Registry[PlanKind] = Registry(
    module.KIND
    for module in (
        namespace,
        project,
        environment,
        quota_change,
        decommission,
        ephemeral,
        end_environment,
        tenant_sync,
        project_decommission,
        tenant_decommission,
        access,
        sleep,
    )
)


def plan_kind_for(request_kind: str) -> PlanKind:
    """KeyError for a value no kind has (payload validation admits none)."""
    return KINDS[request_kind]


def all_plan_kinds() -> Iterator[PlanKind]:
    return iter(KINDS)


def plan_kinds_where(**declared: object) -> tuple[str, ...]:
    """The values of the kinds that declare all of these (`plan_kinds_where(batched=True)`)."""
    return KINDS.where(**declared)
